package actor_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/mailbox"
	"github.com/fraktor-go/fraktor/testkit"
)

// The runtime's own ticks (a timer's, the receive timeout's, a
// ReenterAfter continuation) reach an actor with a full bounded mailbox,
// whatever its overflow policy: a full mailbox refuses or drops user
// messages, not the actor's own timers. Before, a tick refused (Reject) or
// dropped (DropNewest, or pushed out by DropOldest) was lost without a
// trace: the timer's message never came (and the timer stayed Active), the
// callback never ran, and the receive timeout, which re-arms from its
// tick, never fired again.
func TestBoundedMailboxKeepsRuntimeTicks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy mailbox.Overflow
		first  bool // the ticks fire first and a user message comes after (DropOldest pushes them out)
	}{
		{"Reject", mailbox.Reject, false},
		{"DropNewest", mailbox.DropNewest, false},
		{"DropOldest", mailbox.DropOldest, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := testkit.NewManualSystem(t)
			var got []string
			var timer *actor.Timer
			pid := m.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
				switch msg := c.Message().(type) {
				case *actor.Started:
					c.SetReceiveTimeout(10 * time.Millisecond)
					timer = c.SendAfter(10*time.Millisecond, c.Self(), "timer")
					f := c.RequestFuture(c.Self(), "echo", 10*time.Millisecond) // never answered: times out
					c.ReenterAfter(f, func(any, error) { got = append(got, "continuation") })
				case *actor.ReceiveTimeout:
					got = append(got, "receive-timeout")
					c.SetReceiveTimeout(0)
				case string:
					got = append(got, msg)
				}
			}, actor.WithBoundedMailbox(1, tc.policy)))
			m.RunUntilIdle()
			got = nil
			m.Root().Send(pid, "echo-filler") // drained: the mailbox is empty
			m.RunUntilIdle()
			got = nil
			if !tc.first {
				m.Root().Send(pid, "fill") // the mailbox is full when the ticks fire
			}
			m.Clock.Advance(10 * time.Millisecond) // fires the ticks without running the actor
			if tc.first {
				m.Root().Send(pid, "push") // DropOldest pushes a tick out
			}
			m.Advance(time.Second)
			require.Contains(t, got, "timer")
			require.Contains(t, got, "continuation")
			require.Contains(t, got, "receive-timeout")
			require.False(t, timer.Active())
		})
	}
}
