package actor_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/scheduler"
	"github.com/fraktor-go/fraktor/testkit"
)

// starveSharedPool blocks both workers of sys's shared pool in a Receive
// and queues a message for a third actor behind them; it returns the
// function that unblocks them and the channel the third actor's message
// closes once it has run.
func starveSharedPool(t *testing.T, sys *actor.System) (unblock func(), ran <-chan struct{}) {
	t.Helper()
	third := make(chan struct{})
	other := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message() {
		case "ping":
			c.Respond("pong")
		case "run":
			close(third)
		}
	}))
	_, err := actor.Request[string](context.Background(), sys.Root(), other, "ping") // started
	require.NoError(t, err)
	release := make(chan struct{})
	blocked := make(chan struct{}, 2)
	for range 2 {
		pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
			if c.Message() == "block" {
				blocked <- struct{}{}
				<-release
			}
		}))
		sys.Root().Send(pid, "block")
	}
	<-blocked
	<-blocked
	var once sync.Once
	unblock = func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock)            // a failed test must not leave the shared pool blocked for the next ones
	sys.Root().Send(other, "run") // waits in the ready queue: no worker is free
	return unblock, third
}

// TestPoolStarvedIsPublished: with every worker of the shared pool
// blocked in a Receive and an actor waiting, the system publishes
// PoolStarved (and logs it) once the queue has stood still for
// StarvationWarning; before, nothing named why the waiting actor's
// callers timed out.
func TestPoolStarvedIsPublished(t *testing.T) {
	clock := scheduler.NewManualClock(time.Unix(0, 0))
	sys := testkit.NewSystem(t, func(c *actor.SystemConfig) {
		c.Name, c.Workers, c.Clock = "starving", 2, clock
		c.StarvationWarning = time.Second // on a virtual clock, only when asked for
	})
	events := make(chan *actor.PoolStarved, 4)
	actor.Subscribe(sys.EventStream(), func(e *actor.PoolStarved) { events <- e })
	unblock, ran := starveSharedPool(t, sys)
	// scheduler.DefaultStarvedAfter, twice: the watch may have been armed
	// while the blockers were still being taken, and its first look then
	// only sets its baseline. It reports once per episode.
	clock.Advance(time.Second)
	clock.Advance(time.Second)
	var e *actor.PoolStarved
	select {
	case e = <-events:
	case <-time.After(10 * time.Second): // a failure bound: the event is synchronous with Advance
		t.Fatal("no PoolStarved while every worker was blocked and an actor waited")
	}
	assert.Equal(t, "starving", e.Pool)
	assert.Equal(t, 2, e.Workers)
	assert.Equal(t, 1, e.Waiting)
	assert.Contains(t, []time.Duration{time.Second, 2 * time.Second}, e.For)
	select {
	case e := <-events:
		t.Fatalf("a second PoolStarved in one episode: %+v", e)
	default:
	}
	unblock()
	<-ran
}

// TestPoolStarvedOff: a negative StarvationWarning sets no watch at all.
func TestPoolStarvedOff(t *testing.T) {
	clock := scheduler.NewManualClock(time.Unix(0, 0))
	sys := testkit.NewSystem(t, func(c *actor.SystemConfig) {
		c.Workers, c.Clock, c.StarvationWarning = 2, clock, -1
	})
	unblock, ran := starveSharedPool(t, sys)
	assert.Zero(t, clock.Pending(), "a timer is set with the warning off")
	unblock()
	<-ran
}
