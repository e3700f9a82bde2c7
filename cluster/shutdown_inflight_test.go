package cluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// silentMember starts a member whose "silent" grains never answer a
// *Silent, each reported on the returned channel as it arrives.
func silentMember(t *testing.T, configure func(*cluster.Config)) (node, <-chan struct{}) {
	t.Helper()
	got := make(chan struct{}, 1)
	silent := cluster.NewKind("silent", actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*Silent); ok {
			got <- struct{}{} // never answered
		}
	}))
	nd := startMemberWith(t, newRegistry(t), configure, silent)
	awaitMembers(t, 1, nd)
	return nd, got
}

// shutdownOnArrival shuts nd down once a request has reached its grain.
func shutdownOnArrival(t *testing.T, nd node, got <-chan struct{}) {
	t.Helper()
	select {
	case <-got:
	case <-time.After(wait):
		t.Fatal("the request never reached the grain")
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, nd.c.Shutdown(ctx))
}

// A RequestFuture still waiting when the member shuts down ends at Shutdown
// with ErrShuttingDown, as a request made after it would: its own timeout
// (a minute here) has not passed, so ErrTimeout would misreport it.
func TestClusterShutdownEndsInFlightRequestFuture(t *testing.T) {
	nd, got := silentMember(t, func(*cluster.Config) {})
	fut := nd.c.RequestFuture(cluster.NewIdentity("silent", "1"), &Silent{}, time.Minute)
	shutdownOnArrival(t, nd, got)
	_, err := fut.Result()
	if !errors.Is(err, cluster.ErrShuttingDown) || errors.Is(err, cluster.ErrTimeout) {
		t.Fatalf("err %v, want ErrShuttingDown", err)
	}
}

// A blocking Request still waiting for its grain when the member shuts down
// ends at Shutdown with ErrShuttingDown, as a RequestFuture does: the grain
// is stopped without answering, and the caller's deadline (a minute here,
// as are RequestTimeout and AttemptTimeout) is far off. Before, the Request
// waited out its attempt, a minute after Shutdown returned.
func TestClusterShutdownEndsInFlightRequest(t *testing.T) {
	nd, got := silentMember(t, func(c *cluster.Config) {
		c.RequestTimeout, c.AttemptTimeout = time.Minute, time.Minute
	})
	errc := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := cluster.Request[*Total](ctx, nd.c, cluster.NewIdentity("silent", "1"), &Silent{})
		errc <- err
	}()
	shutdownOnArrival(t, nd, got)
	select {
	case err := <-errc:
		if !errors.Is(err, cluster.ErrShuttingDown) || errors.Is(err, cluster.ErrTimeout) {
			t.Fatalf("err %v, want ErrShuttingDown", err)
		}
	case <-time.After(wait):
		t.Fatalf("the request was still waiting %v after Shutdown returned", wait)
	}
}
