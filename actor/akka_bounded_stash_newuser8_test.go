package actor_test

import (
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/mailbox"
	"github.com/fraktor-go/fraktor/testkit"
)

// UnstashAll on a bounded mailbox: the stash goes back whole, whatever
// the capacity and policy (nothing stashed is dropped or refused).
func TestAkkaUnstashAllIntoBoundedMailbox(t *testing.T) {
	for _, pol := range []mailbox.Overflow{mailbox.DropNewest, mailbox.DropOldest, mailbox.Reject} {
		sys := testkit.NewManualSystem(t)
		probe := testkit.NewManualProbe(t, sys)
		events := testkit.NewEventProbe(t, sys.System, testkit.OfType[*actor.DeadLetterEvent]())
		pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
			switch m := c.Message().(type) {
			case int:
				c.Stash()
			case string:
				if m == "open" {
					c.Become(func(c actor.Context) {
						if n, ok := c.Message().(int); ok {
							c.Send(probe.PID(), n)
						}
					})
					c.UnstashAll()
				}
			}
		}, actor.WithBoundedMailbox(2, pol)))
		for i := 0; i < 5; i++ {
			sys.Root().Send(pid, i)
			sys.RunUntilIdle()
		}
		sys.Root().Send(pid, "open")
		sys.RunUntilIdle()
		n := 0
		for {
			if _, ok := probe.Receive(0); !ok {
				break
			}
			n++
		}
		if n != 5 {
			t.Fatalf("policy %v: %d of 5 unstashed messages handled", pol, n)
		}
		events.ExpectNoEvent(10 * time.Millisecond)
	}
}
