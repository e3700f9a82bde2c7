package cluster_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// failingLookup is a custom lookup whose Get of the identity "counter/cold"
// (and "counter/cold…") always fails (a transient error: retried), counting the Gets.
type failingLookup struct {
	*cluster.PartitionIdentityLookup
	gets *atomic.Int32
	// entered, gate: when not nil, each failing Get reports itself on
	// entered and then waits for a token on gate, until gate is closed.
	entered, gate chan struct{}
}

var errColdRefused = errors.New("test: activation refused")

func (l failingLookup) Get(id cluster.Identity, now time.Time) (*actor.PID, error) {
	if strings.HasPrefix(id.ID, "cold") {
		l.gets.Add(1)
		if l.entered != nil {
			select {
			case l.entered <- struct{}{}:
				<-l.gate
			case <-l.gate: // closed: the test ended
			}
		}
		return nil, errColdRefused
	}
	return l.PartitionIdentityLookup.Get(id, now)
}

// TestClusterRequestFutureAttemptsAsRequest: a RequestFuture makes at most
// Retry.MaxAttempts resolutions, as Request does ("an attempt is one
// resolution plus one delivery"). Its first attempt is queued on the
// identity's resolution; a resolution led for queued messages retries by
// itself, and when it failed, the requester counted all of that as one
// attempt and made MaxAttempts-1 more: 2·MaxAttempts-1 resolutions, and
// two RetryThrottled events (the flight's and the requester's).
func TestClusterRequestFutureAttemptsAsRequest(t *testing.T) {
	const attempts = 3
	var gets atomic.Int32
	tune := func(c *cluster.Config) {
		c.Retry = cluster.RetryPolicy{MaxAttempts: attempts, Base: time.Millisecond, Max: 2 * time.Millisecond}
		c.IdentityLookup = func(activate cluster.Activator) (cluster.IdentityLookup, error) {
			p, err := cluster.NewPartitionIdentityLookup(cluster.DefaultLookupConfig(), cluster.WithActivator(activate))
			return failingLookup{p, &gets, nil, nil}, err
		}
	}
	m := startMemberWith(t, newRegistry(t), tune, counterKind())
	awaitMembers(t, 1, m)
	id := cluster.NewIdentity("counter", "cold")
	throttled := make(chan cluster.Identity, 64)
	sub := actor.Subscribe(m.sys.EventStream(), func(e *cluster.RetryThrottled) { throttled <- e.Identity })
	defer m.sys.EventStream().Unsubscribe(sub)
	// events returns how many RetryThrottled events named id until the one
	// of a blocking Request to marker, published after them.
	events := func(marker string) int {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		mark := cluster.NewIdentity("counter", marker)
		_, err := cluster.Request[*Total](ctx, m.c, mark, &Get{})
		require.ErrorIs(t, err, cluster.ErrTimeout)
		n := 0
		for {
			select {
			case got := <-throttled:
				if got == mark {
					return n
				}
				if got == id {
					n++
				}
			case <-ctx.Done():
				t.Fatal("no RetryThrottled for the marker")
			}
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := cluster.Request[*Total](ctx, m.c, id, &Get{})
	require.ErrorIs(t, err, cluster.ErrTimeout)
	require.ErrorIs(t, err, errColdRefused)
	require.Equal(t, int32(attempts), gets.Load(), "Request")
	require.Equal(t, 1, events("cold-m0"), "Request")
	gets.Store(0)

	for _, name := range []string{"RequestFuture", "CallFuture"} {
		var f *actor.Future
		if name == "RequestFuture" {
			f = m.c.RequestFuture(id, &Get{}, 30*time.Second)
		} else {
			f = cluster.CallFuture(m.c, id, &Get{}, 30*time.Second)
		}
		_, err = f.Result()
		require.ErrorIs(t, err, cluster.ErrTimeout, name)
		require.ErrorIs(t, err, errColdRefused, name)
		require.Equal(t, int32(attempts), gets.Load(), name)
		require.Equal(t, 1, events("cold-m-"+name), name)
		gets.Store(0)
	}
}

// TestClusterRequestFutureJoiningLateCountsItsOwnAttempts: a RequestFuture
// queued on a resolution that had already made one attempt (for a Send)
// counts only the resolutions it waited through: two of the flight's
// three, then one of its own, with MaxAttempts 3; the retry metric counts
// its attempts after the first.
func TestClusterRequestFutureJoiningLateCountsItsOwnAttempts(t *testing.T) {
	var gets atomic.Int32
	entered, gate := make(chan struct{}), make(chan struct{})
	tune := func(c *cluster.Config) {
		c.Retry = cluster.RetryPolicy{MaxAttempts: 3, Base: time.Millisecond, Max: 2 * time.Millisecond}
		c.IdentityLookup = func(activate cluster.Activator) (cluster.IdentityLookup, error) {
			p, err := cluster.NewPartitionIdentityLookup(cluster.DefaultLookupConfig(), cluster.WithActivator(activate))
			return failingLookup{p, &gets, entered, gate}, err
		}
	}
	reader := sdkmetric.NewManualReader()
	m := startMemberFull(t, newRegistry(t), tune, withMeter(reader), counterKind())
	awaitMembers(t, 1, m)
	id := cluster.NewIdentity("counter", "cold")
	step := func(what string) {
		select {
		case <-entered:
		case <-time.After(wait):
			t.Fatalf("no Get: %s", what)
		}
	}
	m.c.Send(id, &Add{N: 1})
	step("the Send's first resolution")
	gate <- struct{}{}
	step("the Send's second resolution")
	f := m.c.RequestFuture(id, &Get{}, 30*time.Second) // queued on it
	gate <- struct{}{}
	step("the Send's third resolution")
	gate <- struct{}{}
	step("the request's own third attempt")
	gate <- struct{}{}
	_, err := f.Result()
	require.ErrorIs(t, err, cluster.ErrTimeout)
	require.Contains(t, err.Error(), "3 attempts")
	require.Equal(t, int32(4), gets.Load())
	// Its attempts after the first are its retries: 2 (1 counted before,
	// only its own third).
	sum, ok := collect(t, reader)["fraktor.cluster.request.retries"].Data.(metricdata.Sum[int64])
	require.True(t, ok, "the retry counter exists")
	require.Len(t, sum.DataPoints, 1)
	require.EqualValues(t, 2, sum.DataPoints[0].Value)
}
