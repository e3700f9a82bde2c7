package router_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/router"
	"github.com/fraktor-go/fraktor/testkit"
)

func TestStopRouterStopsPoolRoutees(t *testing.T) {
	ms := testkit.NewManualSystem(t)
	p := testkit.NewManualProbe(t, ms)
	r, err := router.SpawnPool(ms.Root(), echoProps(nil), 3, router.RoundRobin())
	require.NoError(t, err)
	pool := routees(t, p, r)
	for _, pid := range pool {
		p.Watch(pid)
	}
	f := ms.Root().StopFuture(r)
	ms.RunUntilIdle()
	term, err := f.Result()
	require.NoError(t, err)
	assert.True(t, term.(*actor.Terminated).Who.Equal(r), "the watcher hears of the router's PID")
	for range pool {
		testkit.ExpectMsg[*actor.Terminated](p, time.Second)
	}
	// Stopped: the ID is free and what is sent to the router is refused.
	g := ms.Root().RequestFuture(r, &whoAmI{}, 0)
	ms.RunUntilIdle()
	assert.ErrorIs(t, g.Wait(), router.ErrStopped)
}

func TestStopRouterLeavesGroupRouteesRunning(t *testing.T) {
	ms := testkit.NewManualSystem(t)
	a := testkit.NewManualProbe(t, ms)
	r, err := router.SpawnGroup(ms.Root(), router.RoundRobin(), []*actor.PID{a.PID()})
	require.NoError(t, err)
	a.Watch(r)
	ms.Root().Poison(r)
	a.ExpectTerminated(r, time.Second)
	ms.Root().Send(a.PID(), "alive")
	a.ExpectMsgEqual("alive", time.Second)
}

func TestWatchAfterStopIsAnsweredAtOnce(t *testing.T) {
	ms := testkit.NewManualSystem(t)
	p := testkit.NewManualProbe(t, ms)
	r, err := router.SpawnGroup(ms.Root(), router.RoundRobin(), nil)
	require.NoError(t, err)
	ms.Root().Stop(r)
	ms.RunUntilIdle()
	p.Watch(r)
	p.ExpectTerminated(r, time.Second)
}

func TestRouterNameAndLookupByID(t *testing.T) {
	ms := testkit.NewManualSystem(t)
	p := testkit.NewManualProbe(t, ms)
	r, err := router.SpawnPool(ms.Root(), echoProps(nil), 1, router.RoundRobin(), router.WithName("workers"))
	require.NoError(t, err)
	assert.Equal(t, "workers", r.ID)
	_, err = ms.Root().SpawnNamed(echoProps(nil), "workers")
	assert.ErrorIs(t, err, actor.ErrNameExists, "the router holds its name")
	_, err = router.SpawnGroup(ms.Root(), router.RoundRobin(), nil, router.WithName("workers"))
	assert.ErrorIs(t, err, actor.ErrNameExists)

	// A PID rebuilt from the address and ID (as from the wire) routes too.
	p.Send(actor.NewPID(r.Address, "workers"), &whoAmI{})
	testkit.ExpectMsg[*actor.PID](p, time.Second)
}

func TestRouterSpawnedByActorIsItsChild(t *testing.T) {
	ms := testkit.NewManualSystem(t)
	p := testkit.NewManualProbe(t, ms)
	parent := ms.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			r, err := router.SpawnPool(c, echoProps(nil), 2, router.RoundRobin(), router.WithName("pool"))
			if err != nil {
				panic(err)
			}
			c.Send(p.PID(), r)
		}
	}))
	r := testkit.ExpectMsg[*actor.PID](p, time.Second)
	assert.Contains(t, r.ID, "/pool", "named under its parent like a child")
	p.Watch(r)
	require.NoError(t, awaitStop(ms, parent))
	p.ExpectTerminated(r, time.Second)
}

// Messages sent before a pool's routees exist are held and routed in the
// order they were sent.
func TestMessagesSentWhilePoolStartsKeepTheirOrder(t *testing.T) {
	ms := testkit.NewManualSystem(t)
	p := testkit.NewManualProbe(t, ms)
	r, err := router.SpawnPool(ms.Root(), echoProps(p.PID()), 1, router.RoundRobin())
	require.NoError(t, err)
	for _, m := range []string{"a", "b", "c"} {
		ms.Root().Send(r, m) // nothing has run: the pool has no routee yet
	}
	for _, m := range []string{"a", "b", "c"} {
		p.ExpectMsgEqual(m, time.Second)
	}
}

// Many senders route while the pool is resized: every message is either
// handled or, when it reached a removed routee after its PoisonPill, a
// counted dead letter; none is lost silently (race detector on the
// snapshot and the counter).
func TestConcurrentSendersDuringResize(t *testing.T) {
	sys := testkit.NewSystem(t)
	const senders, each = 4, 500
	var arrived atomic.Int64
	sink := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(string); ok {
			arrived.Add(1)
		}
	}))
	r, err := router.SpawnPool(sys.Root(), echoProps(sink), 2, router.RoundRobin())
	require.NoError(t, err)
	var sent sync.WaitGroup
	for range senders {
		sent.Go(func() {
			for range each {
				sys.Root().Send(r, "m")
			}
		})
	}
	for _, n := range []int{6, 3, 8, 2} {
		_, err := actor.Request[*router.Routees](t.Context(), sys.Root(), r, &router.Resize{Size: n})
		require.NoError(t, err)
	}
	sent.Wait()
	testkit.Eventually(t, func() bool {
		return arrived.Load()+int64(sys.DeadLetters()) == senders*each
	}, 10*time.Second, "arrived %d + dead letters %d", arrived.Load(), sys.DeadLetters())
	assert.Greater(t, arrived.Load(), int64(senders*each/2))
}

// An unnamed router's name comes from its system's ID sequence, like a
// generated actor ID: fresh deterministic systems name their routers
// alike (the same trace on every run, whatever ran before in the process),
// and a router's name is not a process-wide count.
func TestUnnamedRoutersAreNamedPerSystem(t *testing.T) {
	names := func() []string {
		ms := testkit.NewManualSystem(t)
		var out []string
		for range 2 {
			r, err := router.SpawnGroup(ms.Root(), router.RoundRobin(), nil)
			require.NoError(t, err)
			out = append(out, r.ID)
		}
		parent := ms.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
			if _, ok := c.Message().(*actor.Started); ok {
				r, err := router.SpawnGroup(c, router.RoundRobin(), nil)
				if err != nil {
					panic(err)
				}
				out = append(out, r.ID)
			}
		}))
		require.NotNil(t, parent)
		ms.RunUntilIdle()
		return append(out, ms.TraceStrings()...)
	}
	first := names()
	require.Greater(t, len(first), 3)
	assert.Equal(t, first, names(), "a second fresh system names its routers alike")
	assert.Regexp(t, `^router\$\w+$`, first[0])
	assert.Regexp(t, `/router\$\w+$`, first[2], "a child router is named under its parent")
}

// A router spawned by an actor that has stopped its children (from its
// Stopped handler) is refused, named or not: the actor takes no child.
func TestRouterSpawnedByStoppingActorIsRefused(t *testing.T) {
	for _, name := range []string{"", "named"} {
		t.Run("name="+name, func(t *testing.T) {
			ms := testkit.NewManualSystem(t)
			p := testkit.NewManualProbe(t, ms)
			parent := ms.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
				if _, ok := c.Message().(*actor.Stopped); ok {
					var opts []router.Option
					if name != "" {
						opts = append(opts, router.WithName(name))
					}
					_, err := router.SpawnPool(c, echoProps(nil), 1, router.RoundRobin(), opts...)
					c.Send(p.PID(), err)
				}
			}))
			ms.RunUntilIdle()
			require.NoError(t, awaitStop(ms, parent))
			err := testkit.ExpectMsg[error](p, time.Second)
			assert.ErrorIs(t, err, actor.ErrParentStopping)
		})
	}
}
