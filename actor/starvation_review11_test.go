package actor_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/scheduler"
	"github.com/fraktor-go/fraktor/testkit"
)

// TestReview11StarvationWatchSetsNoTimerOnAVirtualClock showed a defect of
// 330250b: on a system whose Clock is virtual (a ManualClock: testkit's
// VirtualTime clusters, the many tests that drive timers by hand), the
// starvation watch is on by default and its timer is a timer of that
// clock. One ordinary Schedule that finds every worker busy (here: a
// Send while the only worker runs a Receive) leaves it pending on the
// test's clock after the pool is idle again, until someone advances the
// clock by StarvationWarning; tests that count the clock's timers now see
// one more or one less depending on the workers' timing
// (cluster's TestClusterLeaseEventsKeepOneTickTimer fails about 8 runs in
// 20 on main, never on 70dedf2). And it measures virtual time against
// workers that run in wall time: an Advance of 2 s made while a worker is
// busy for microseconds reports a starved pool (Warn log and PoolStarved).
//
// Fixed on 2026-11-25 (the test failed before). Suggested then: as the deferred turns do (future_deferred.go: "only with
// the system clock"), leave the watch off by default when the system's
// clock is not the system clock (StarvationWarning 0 with a virtual clock
// means off; a positive value still turns it on, for
// TestPoolStarvedIsPublished), or run the watch on the wall clock
// whatever Config.Clock is.
func TestReview11StarvationWatchSetsNoTimerOnAVirtualClock(t *testing.T) {
	clock := scheduler.NewManualClock(time.Unix(0, 0))
	sys := testkit.NewSystem(t, func(c *actor.SystemConfig) { c.Workers, c.Clock = 1, clock })
	running, release := make(chan struct{}), make(chan struct{})
	busy := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if c.Message() == "work" {
			close(running)
			<-release // a short piece of work, as far as the test is concerned
		}
	}))
	ran := make(chan struct{})
	other := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if c.Message() == "run" {
			close(ran)
		}
	}))
	sys.Root().Send(busy, "work")
	<-running
	sys.Root().Send(other, "run") // finds no parked worker
	close(release)
	<-ran
	assert.Zero(t, clock.Pending(), "no actor timer is set, yet a timer is pending on the system's virtual clock")
}

// TestReview11PoolStarvedOnTheSystemClockThenShutdown (a probe that
// passes; kept because the package's own starvation tests all run on a
// ManualClock): on the system clock, with every worker of the shared pool
// blocked and an actor waiting, PoolStarved is published (StarvationWarning
// 20 ms here); once the pool moves again the system shuts down with the
// watch possibly still armed (its timer pending until its next look), and
// leaves no goroutine behind (NewSystem's leak check at cleanup).
func TestReview11PoolStarvedOnTheSystemClockThenShutdown(t *testing.T) {
	sys := testkit.NewSystem(t, func(c *actor.SystemConfig) {
		c.Name, c.Workers, c.StarvationWarning = "starving", 2, 20*time.Millisecond
	})
	events := make(chan *actor.PoolStarved, 4)
	actor.Subscribe(sys.EventStream(), func(e *actor.PoolStarved) { events <- e })
	release := make(chan struct{})
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
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
	ran := make(chan struct{})
	other := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if c.Message() == "run" {
			close(ran)
		}
	}))
	sys.Root().Send(other, "run") // waits in the ready queue
	select {
	case e := <-events:
		assert.Equal(t, "starving", e.Pool)
		assert.Equal(t, 2, e.Workers)
	case <-time.After(10 * time.Second): // a failure bound
		t.Fatal("no PoolStarved on the system clock")
	}
	close(release)
	<-ran
}
