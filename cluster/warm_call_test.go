package cluster_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// Messages of the holder grain: holdAsk is answered (with the goroutine
// that ran the grain) unless the grain holds it; holdRelease answers every
// held ask; holdWarm is answered at once.
type (
	holdAsk     struct{}
	holdRelease struct{}
	holdWarm    struct{}
)

// holderKind is a grain that holds the asks it gets while hold says so
// (the number of asks it has had so far, this one included, and the
// identity), reporting each on arrived (when not nil).
func holderKind(hold func(n int, id cluster.Identity) bool, arrived chan<- struct{}) cluster.Kind {
	return cluster.NewKind("holder", actor.PropsFromProducer(func() actor.Actor {
		n := 0
		var held []*actor.PID
		return actor.ReceiveFunc(func(c actor.Context) {
			switch c.Message().(type) {
			case holdWarm:
				c.Respond(goid())
			case holdAsk:
				n++
				id, _ := cluster.IdentityOf(c)
				if arrived != nil {
					arrived <- struct{}{}
				}
				if hold(n, id) {
					held = append(held, c.Sender())
					return
				}
				c.Respond(goid())
			case holdRelease:
				for _, p := range held {
					c.Send(p, goid())
				}
				held = nil
			}
		})
	}))
}

// goid is the calling goroutine's ID.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	id, _ := strconv.ParseUint(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return id
}

// holderMember starts one member hosting holderKind, with its metrics
// read by reader, and warms the grains ids (their PIDs are known from then
// on).
func holderMember(t *testing.T, tune func(*cluster.Config), hold func(int, cluster.Identity) bool, arrived chan<- struct{}, ids ...cluster.Identity) node {
	t.Helper()
	return holderMemberRead(t, sdkmetric.NewManualReader(), tune, hold, arrived, ids...)
}

func holderMemberRead(t *testing.T, reader *sdkmetric.ManualReader, tune func(*cluster.Config), hold func(int, cluster.Identity) bool, arrived chan<- struct{}, ids ...cluster.Identity) node {
	t.Helper()
	nd := startMemberFull(t, newRegistry(t), tune, withMeter(reader), holderKind(hold, arrived))
	awaitMembers(t, 1, nd)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for _, id := range ids {
		_, err := cluster.Request[uint64](ctx, nd.c, id, holdWarm{})
		require.NoError(t, err)
	}
	return nd
}

// A RequestFuture or CallFuture to a grain whose PID is known takes no
// goroutine while it waits: its future completes from the completion of the
// request to the grain (warm_call.go). Before, each waited on a goroutine
// of its own: 400 calls waiting took 400 goroutines.
func TestWarmCallNeedsNoGoroutine(t *testing.T) {
	id := cluster.NewIdentity("holder", "1")
	nd := holderMember(t, func(*cluster.Config) {}, func(int, cluster.Identity) bool { return true }, nil, id)
	const calls = 400
	before := runtime.NumGoroutine()
	futs := make([]*actor.Future, 0, calls)
	for i := range calls {
		if i%2 == 0 {
			futs = append(futs, nd.c.RequestFuture(id, holdAsk{}, wait))
		} else {
			futs = append(futs, cluster.CallFuture(nd.c, id, holdAsk{}, wait))
		}
	}
	grown := runtime.NumGoroutine() - before
	nd.c.Send(id, holdRelease{}) // after the asks: it answers them all
	for i, f := range futs {
		_, err := f.Result()
		require.NoError(t, err, "call %d", i)
	}
	require.Less(t, grown, calls/4, "%d calls waiting took %d goroutines", calls, grown)
}

// A warm RequestFuture waited on from outside, with the pools idle, runs a
// local grain's turn on the calling goroutine, as an actor request does
// (futurehook.TurnFuture): no worker is woken and no goroutine hands the
// answer over. Before, a goroutine of the call ran it. Background work of
// the member may keep a worker busy now and then, so one call of many on
// the caller is enough.
func TestWarmCallRunsLocalGrainOnCaller(t *testing.T) {
	id := cluster.NewIdentity("holder", "1")
	nd := holderMember(t, func(*cluster.Config) {}, func(int, cluster.Identity) bool { return false }, nil, id)
	me := goid()
	for i := range 500 {
		v, err := nd.c.RequestFuture(id, holdAsk{}, wait).Result()
		require.NoError(t, err)
		if v.(uint64) == me {
			return
		}
		if i%50 == 49 {
			runtime.Gosched()
		}
	}
	t.Fatal("no call ran the grain on the caller")
}

// Warm calls still waiting for their grain when the member shuts down end
// with ErrShuttingDown, not at their timeout (a minute): Shutdown fails the
// request of every warm call in flight (warmCalls.close). Without that the
// calls would wait out their attempt.
func TestWarmCallShutdownEndsIt(t *testing.T) {
	arrived := make(chan struct{}, 8)
	id := cluster.NewIdentity("holder", "1")
	nd := holderMember(t, func(c *cluster.Config) {
		c.RequestTimeout, c.AttemptTimeout = time.Minute, time.Minute
	}, func(int, cluster.Identity) bool { return true }, arrived, id)
	futs := []*actor.Future{
		nd.c.RequestFuture(id, holdAsk{}, time.Minute),
		cluster.CallFuture(nd.c, id, holdAsk{}, time.Minute),
	}
	errc := make(chan error, 1)
	go func() {
		_, err := cluster.Request[uint64](context.Background(), nd.c, id, holdAsk{})
		errc <- err
	}()
	for range 3 {
		select {
		case <-arrived:
		case <-time.After(wait):
			t.Fatal("the calls never reached the grain")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, nd.c.Shutdown(ctx))
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, cluster.ErrShuttingDown) || errors.Is(err, cluster.ErrTimeout) {
			t.Fatalf("%s: err %v, want ErrShuttingDown", what, err)
		}
	}
	for i, f := range futs {
		fctx, fcancel := context.WithTimeout(context.Background(), wait)
		_, err := f.ResultContext(fctx)
		fcancel()
		check(fmt.Sprint("future ", i), err)
	}
	select {
	case err := <-errc:
		check("Request", err)
	case <-time.After(wait):
		t.Fatalf("Request still waiting %v after Shutdown returned", wait)
	}
	// A call made now fails at once.
	_, err := nd.c.RequestFuture(id, holdAsk{}, time.Minute).Result()
	check("after", err)
}

// A warm call whose first attempt fails (here its attempt times out: the
// grain holds its first ask) retries as any request does: the failed
// attempt's PID is dropped, the identity resolved again and the ask sent
// again, within the call's deadline; the call succeeds and counts its
// retry. The retries run on a goroutine started only on the failure.
func TestWarmCallRetriesAfterFailedAttempt(t *testing.T) {
	var asks atomic.Int32
	apis := []struct {
		name string
		call func(c *cluster.Cluster, id cluster.Identity) error
	}{
		{"RequestFuture", func(c *cluster.Cluster, id cluster.Identity) error {
			_, err := c.RequestFuture(id, holdAsk{}, wait).Result()
			return err
		}},
		{"CallFuture", func(c *cluster.Cluster, id cluster.Identity) error {
			_, err := cluster.CallFuture(c, id, holdAsk{}, wait).Result()
			return err
		}},
		{"Request", func(c *cluster.Cluster, id cluster.Identity) error {
			_, err := cluster.Request[uint64](context.Background(), c, id, holdAsk{})
			return err
		}},
	}
	ids := make([]cluster.Identity, len(apis))
	for i, api := range apis {
		ids[i] = cluster.NewIdentity("holder", api.name)
	}
	reader := sdkmetric.NewManualReader()
	nd := holderMemberRead(t, reader, func(c *cluster.Config) {
		c.RequestTimeout, c.AttemptTimeout = wait, 500*time.Millisecond // a second attempt answers well within it
	}, func(n int, _ cluster.Identity) bool {
		asks.Add(1)
		return n == 1
	}, nil, ids...)
	retries := func() int64 {
		sum, ok := collect(t, reader)["fraktor.cluster.request.retries"].Data.(metricdata.Sum[int64])
		if !ok {
			return 0
		}
		var n int64
		for _, dp := range sum.DataPoints {
			n += dp.Value
		}
		return n
	}
	for i, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			asks.Store(0)
			before := retries()
			require.NoError(t, api.call(nd.c, ids[i]))
			require.EqualValues(t, 2, asks.Load(), "asks the grain got")
			require.EqualValues(t, 1, retries()-before, "retries counted")
		})
	}
}
