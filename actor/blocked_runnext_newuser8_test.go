package actor_test

// A defect found by newuser8; this test fails on the code it was written
// against (see the report).

import (
	"context"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// docs/actors.md ("The basics"): a Receive that blocks holds one worker of
// the shared pool; "as many blocked actors as workers stop every other
// actor of the system". With fewer blocked actors than workers the others
// should go on, as on an Akka dispatcher (whose fork-join pool lets an idle
// thread steal the blocked thread's queued work). They do not when the
// blocked actor has just made another actor runnable: that actor went to
// the blocked worker's run-next slot (docs/architecture.md, "Run-next"),
// which no other worker takes, so it waits for the blocking Receive to
// return, while the second worker is parked. Here the blocked actor waits
// for the other actor itself (an Await inside an actor, a pattern ported
// Akka code has): a deadlock on a two-worker pool with one worker idle.
// Expected: a runnable actor never waits behind a blocked invocation while
// a worker is idle (hand the run-next occupant to the shared queue, or let
// idle workers take it), or actors.md says that a blocking Receive stalls
// the actors it has just sent to.
func TestNewuser8BlockingReceiveStrandsTheActorItSentTo(t *testing.T) {
	sys := testkit.NewSystem(t, func(c *actor.SystemConfig) { c.Workers = 2 })
	ran := make(chan struct{})
	helper := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message() {
		case "help":
			close(ran)
		case "ping":
			c.Respond("pong")
		}
	}))
	result := make(chan bool, 1)
	asker := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if c.Message() == "ping" {
			c.Respond("pong")
		}
		if c.Message() == "go" {
			c.Send(helper, "help")
			select { // blocks this worker until the helper has run
			case <-ran:
				result <- true
			case <-time.After(2 * time.Second):
				result <- false
			}
		}
	}))
	// Both actors started and idle: a round trip to each.
	for _, pid := range []*actor.PID{helper, asker} {
		if _, err := actor.Request[string](context.Background(), sys.Root(), pid, "ping"); err != nil {
			t.Fatal(err)
		}
	}
	sys.Root().Send(asker, "go")
	if !<-result {
		t.Fatal("the helper did not run within 2 s while the asker blocked one of two workers (the other was idle)")
	}
}
