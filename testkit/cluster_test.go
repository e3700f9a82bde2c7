package testkit_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/scheduler"
	"github.com/fraktor-go/fraktor/testkit"
)

// Messages of the counter grain (JSON across members).
type (
	addReq struct {
		ID string
		N  int
	}
	getReq  struct{}
	total   struct{ N int }
	whoReq  struct{}
	whereIs struct{ Member string }
)

func counterMessages(s *remote.Serializers) error {
	for _, err := range []error{
		remote.RegisterJSON[*addReq](s, "tk.add"),
		remote.RegisterJSON[*getReq](s, "tk.get"),
		remote.RegisterJSON[*total](s, "tk.total"),
		remote.RegisterJSON[*whoReq](s, "tk.who"),
		remote.RegisterJSON[*whereIs](s, "tk.where"),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// plainCounter sums adds in memory.
func plainCounter() cluster.Kind {
	return cluster.NewKind("counter", actor.PropsFromProducer(func() actor.Actor {
		n := 0
		return actor.ReceiveFunc(func(c actor.Context) {
			switch m := c.Message().(type) {
			case *addReq:
				n += m.N
				c.Respond(&total{N: n})
			case *getReq:
				c.Respond(&total{N: n})
			case *whoReq:
				c.Respond(&whereIs{Member: c.Self().Address})
			}
		})
	}))
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestClusterKillRestartNoOverlap(t *testing.T) {
	tc := testkit.NewCluster(t, testkit.Nodes(3), testkit.Kinds(plainCounter()), testkit.Serializers(counterMessages))
	ctx := ctxFor(t, 30*time.Second)
	for i := range 30 {
		_, err := testkit.Request[*total](ctx, tc.Node(i%3), cluster.NewIdentity("counter", fmt.Sprint(i)), &addReq{N: 1})
		require.NoError(t, err)
	}
	tc.Kill(1)
	for i := range 30 {
		_, err := testkit.Request[*whereIs](ctx, tc.Node(0), cluster.NewIdentity("counter", fmt.Sprint(i)), &whoReq{})
		require.NoError(t, err)
	}
	tc.Restart(1)
	require.NoError(t, tc.AwaitConverged(ctx))
	for i := range 30 {
		_, err := testkit.Request[*whereIs](ctx, tc.Node(1), cluster.NewIdentity("counter", fmt.Sprint(i)), &whoReq{})
		require.NoError(t, err)
	}
	tc.Observer().AssertNoOverlap(t)
	tc.Observer().AssertTokensMonotonic(t)
	t.Log(tc.Observer().Report())
}

// AwaitConverged's error reports what each running member and the registry
// see, naming a registered member that no slot runs (as an incarnation
// left registered by a rejoin that outlived its member's shutdown would
// be).
func TestAwaitConvergedReportsEachMembersView(t *testing.T) {
	tc := testkit.NewCluster(t, testkit.Nodes(2), testkit.Kinds(plainCounter()), testkit.Serializers(counterMessages))
	ctx := ctxFor(t, 30*time.Second)
	require.NoError(t, tc.AwaitConverged(ctx))
	ghost, err := tc.Registry().Join(ctx, cluster.Member{ID: "ghost", Incarnation: 1, Address: "127.0.0.1:1"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = ghost.Leave(context.Background()) })
	for i := range 2 {
		saw := make(chan struct{}, 1)
		es := tc.System(i).EventStream()
		sub := actor.Subscribe(es, func(ev *cluster.TopologyChanged) {
			if len(ev.Members) == 3 {
				select {
				case saw <- struct{}{}:
				default:
				}
			}
		})
		if len(tc.Node(i).Members()) != 3 {
			select {
			case <-saw:
			case <-ctx.Done():
				t.Fatalf("member %d never saw the ghost", i)
			}
		}
		es.Unsubscribe(sub)
	}

	done, cancel := context.WithCancel(context.Background())
	cancel()
	err = tc.AwaitConverged(done)
	require.ErrorIs(t, err, context.Canceled)
	msg := err.Error()
	t.Log(msg)
	for _, want := range []string{
		"member 0 sees 3 members, 2 run",
		"member 0 " + tc.Node(0).Self().Key() + ": ready",
		"member 1 " + tc.Node(1).Self().Key() + ": ready",
		"3 members; not running: ghost#1 (no slot)",
		"registry: view epoch",
	} {
		require.Contains(t, msg, want)
	}
}

// TestKillIsAbruptEvenWhenPaused: Kill never leaves gracefully, also when
// the member is paused (a Pause holds a registry cut, which the end of
// the pause lifts while the killed member shuts down): the registry keeps
// the killed member until its lease expires, as for a crashed process.
func TestKillIsAbruptEvenWhenPaused(t *testing.T) {
	// Leases that cannot expire during the test: a member gone from the
	// registry has left.
	long := cluster.MemoryConfig{LeaseTTL: time.Minute, RenewInterval: 100 * time.Millisecond, FencePeriod: 400 * time.Millisecond}
	tc := testkit.NewCluster(t, testkit.Nodes(3), testkit.Registry(long))
	registered := func(i int) bool {
		key := tc.Node(i).Self().Key()
		for _, m := range tc.Registry().Topology().Members {
			if m.Key() == key {
				return true
			}
		}
		return false
	}
	tc.Kill(1)
	require.True(t, registered(1), "a killed member did not leave")
	tc.Pause(2, time.Hour)
	tc.Kill(2)
	require.True(t, registered(2), "a killed paused member did not leave")
}

// TestClusterNoSuchMemberFails: State of a member number out of range
// fails the test with a message, as Node and the others do, instead of
// panicking.
func TestClusterNoSuchMemberFails(t *testing.T) {
	rec := newRecorder(t)
	tc := testkit.NewCluster(rec, testkit.Nodes(1))
	require.Empty(t, rec.Fatals())
	require.NotPanics(t, func() { tc.State(5) })
	require.Equal(t, "testkit: no member 5 (have 1)", rec.lastFatal())
}

// TestPauseStopsABusyActor: while a member is paused no actor of it runs,
// a busy one included: past the batch it was running when the pause came
// (at most the throughput), an actor that always has another message waits
// for the resume. Before, the worker pool ran it again on its own without
// asking the member's dispatcher, so it never stopped.
func TestPauseStopsABusyActor(t *testing.T) {
	tc := testkit.NewCluster(t, testkit.Nodes(1))
	const throughput = scheduler.DefaultThroughput
	var runs atomic.Int64
	ran := make(chan struct{}, 1)
	type tick struct{}
	pid := tc.System(0).Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*tick); ok {
			runs.Add(1)
			select {
			case ran <- struct{}{}:
			default:
			}
			c.Send(c.Self(), &tick{}) // always another message
		}
	}))
	tc.System(0).Root().Send(pid, &tick{})
	<-ran
	tc.Pause(0, time.Hour)
	paused := runs.Load()
	limit := paused + 2*throughput // the batch in flight, with room to spare
	deadline := time.After(testkit.DefaultNoMsgWait)
	for runs.Load() <= limit {
		select {
		case <-ran:
		case <-deadline:
			tc.Resume(0)
			<-ran // it runs again once resumed
			return
		}
	}
	tc.Resume(0)
	t.Fatalf("the actor ran %d times during the pause (at most %d allowed)", runs.Load()-paused, limit-paused)
}

// TestDisconnectResetsTheLink: Disconnect closes the connections between
// two members at once (each member's remote reports the loss), leaves the
// others alone, and the two reconnect: requests across the link succeed
// again.
func TestDisconnectResetsTheLink(t *testing.T) {
	tc := testkit.NewCluster(t, testkit.Nodes(3), testkit.Kinds(plainCounter()), testkit.Serializers(counterMessages))
	ctx := ctxFor(t, 30*time.Second)
	ids := make([]cluster.Identity, 30)
	for k := range ids {
		ids[k] = cluster.NewIdentity("counter", fmt.Sprint(k))
	}
	for i := range 3 {
		for _, id := range ids { // every link carries requests and replies
			_, err := testkit.Request[*total](ctx, tc.Node(i), id, &getReq{})
			require.NoError(t, err)
		}
	}
	type lost struct{ at, peer string }
	losses := make(chan lost, 64)
	for i := range 3 {
		es := tc.System(i).EventStream()
		at := tc.Address(i)
		sub := actor.Subscribe(es, func(ev *remote.Event) {
			if ev.Kind == remote.EventDisconnected {
				losses <- lost{at: at, peer: ev.Peer.Address}
			}
		})
		t.Cleanup(func() { es.Unsubscribe(sub) })
	}
	n := tc.Disconnect(0, 1)
	require.Positive(t, n, "no connection between members 0 and 1 was closed")
	seen := map[lost]bool{}
	for !seen[lost{tc.Address(0), tc.Address(1)}] || !seen[lost{tc.Address(1), tc.Address(0)}] {
		select {
		case l := <-losses:
			seen[l] = true
		case <-ctx.Done():
			t.Fatalf("the link 0–1 was not reported lost at both ends: saw %v", seen)
		}
	}
	for l := range seen {
		require.NotContains(t, []string{l.at, l.peer}, tc.Address(2), "Disconnect(0, 1) closed a connection of member 2")
	}
	for _, i := range []int{0, 1} {
		for _, id := range ids {
			_, err := testkit.Request[*total](ctx, tc.Node(i), id, &addReq{N: 1})
			require.NoError(t, err)
		}
	}
}
