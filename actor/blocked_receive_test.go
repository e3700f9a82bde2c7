package actor_test

import (
	"context"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// A Receive that blocks waiting for an actor it has just sent to: on the
// shared pool that actor went to the blocked worker's run-next slot (or
// local batch), which no other worker takes, so it waits for the blocking
// Receive to return, even with another worker idle (newuser8's report: a
// deadlock until the asker's timeout, 10 of 10 runs). Letting idle workers
// take the slot made every actor-to-actor hop pay a CAS: ping-pong +6 to
// +12 % (a helper's measurement, 2026-11-25), so the shared pool keeps the
// slot private and docs/actors.md tells actors that block to run
// WithBlocking, whose pool has no run-next slot and takes one runnable at a
// time. This test pins that remedy: the same asker WithBlocking does not
// strand the helper. (Requests made with the actor's Context hand the
// worker's slot over themselves: TestRequestFromReceiveDoesNotStrandTheTarget.
// A channel wait, as here, cannot.)
func TestBlockingReceiveWithBlockingDoesNotStrand(t *testing.T) {
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
	}, actor.WithBlocking()))
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
