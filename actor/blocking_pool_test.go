package actor_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// An actor of the blocking pool (WithBlocking: "for actors that block")
// that sends to another blocking actor and then blocks until that one
// answers must get its answer from one of the pool's idle workers. The
// pool's run-next slot puts the target on the sender's own worker, to run
// after the sender's turn, which is blocked waiting for it: the inner
// request times out although three of the four workers are parked (and a
// blocking actor that merely sends before a long I/O delays its target by
// as long). The blocking pool's scheduler.Config sets DisableRunNext, which
// a pool whose invocations may block must set. Found by the second
// scheduler review.
func TestBlockingActorRequestToBlockingActor(t *testing.T) {
	sys, err := actor.NewSystem(actor.SystemConfig{BlockingWorkers: 4})
	require.NoError(t, err)
	defer func() { require.NoError(t, sys.Shutdown(context.Background())) }()
	y := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*ping); ok {
			c.Respond(&pong{})
		}
	}, actor.WithBlocking()))
	x := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case string:
			c.Respond("started")
		case *ping:
			_, err := c.RequestFuture(y, &ping{}, time.Second).Result() // blocks, as this pool allows
			c.Respond(err)
		}
	}, actor.WithBlocking()))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Both have started and are idle, so x's send finds y idle.
	_, err = sys.Root().RequestFuture(y, &ping{}, 5*time.Second).ResultContext(ctx)
	require.NoError(t, err)
	_, err = sys.Root().RequestFuture(x, "started?", 5*time.Second).ResultContext(ctx)
	require.NoError(t, err)

	res, err := sys.Root().RequestFuture(x, &ping{}, 5*time.Second).ResultContext(ctx)
	require.NoError(t, err)
	require.Nil(t, res, "the error of x's request to y")
}

// The same pool's workers take a fair share of the ready queue into a
// local batch that no other worker can take: with two workers and four
// blocking actors queued, the first worker free takes two, and while the
// first of them blocks (here, until the second has run) the second waits
// behind it, although the other worker has run the rest and parked. The
// blocking pool takes one runnable at a time (MaxBatch 1;
// scheduler.Config.MaxBatch says why).
func TestBlockingPoolDoesNotHoldQueuedActorsBehindABlockedOne(t *testing.T) {
	sys, err := actor.NewSystem(actor.SystemConfig{BlockingWorkers: 2})
	require.NoError(t, err)
	defer func() { require.NoError(t, sys.Shutdown(context.Background())) }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	running := make(chan string, 8)
	release := map[string]chan struct{}{"z1": make(chan struct{}), "z2": make(chan struct{})}
	bRan := make(chan struct{})
	var aWaited error
	spawn := func(name string) *actor.PID {
		return sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
			if _, ok := c.Message().(*ping); ok {
				c.Respond(&pong{})
				return
			}
			if _, ok := c.Message().(string); !ok {
				return
			}
			running <- name
			switch name {
			case "z1", "z2":
				<-release[name] // holds its worker until released
			case "a":
				select { // blocks until b has run, or gives up
				case <-bRan:
				case <-time.After(time.Second):
					aWaited = errors.New("b did not run while a blocked")
				}
			case "b":
				close(bRan)
			}
		}, actor.WithBlocking()))
	}
	pids := map[string]*actor.PID{}
	for _, name := range []string{"z1", "z2", "a", "b", "c", "d"} {
		pids[name] = spawn(name)
		_, err := sys.Root().RequestFuture(pids[name], &ping{}, 5*time.Second).ResultContext(ctx)
		require.NoError(t, err, "%s started", name)
	}
	// The pool's two workers are busy, one with each z.
	sys.Root().Send(pids["z1"], "go")
	require.Equal(t, "z1", <-running)
	sys.Root().Send(pids["z2"], "go")
	require.Equal(t, "z2", <-running)
	// a, b, c, d wait in the ready queue, in order.
	for _, name := range []string{"a", "b", "c", "d"} {
		sys.Root().Send(pids[name], "go")
	}
	close(release["z1"]) // the worker freed takes its share: a and b
	require.Equal(t, "a", <-running)
	close(release["z2"]) // the other takes what is left (c, d) and parks
	for range 3 {
		<-running
	}
	require.NoError(t, sys.Root().StopFuture(pids["a"]).Wait())
	require.NoError(t, aWaited)
}
