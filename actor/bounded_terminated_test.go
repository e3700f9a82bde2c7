package actor_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/mailbox"
	"github.com/fraktor-go/fraktor/scheduler"
	"github.com/fraktor-go/fraktor/testkit"
)

// A watcher whose bounded mailbox is full when its watched actor stops
// still receives the Terminated, whatever the overflow policy: the runtime
// queues it through the user queue (so that it comes after the watched
// actor's last messages), and a full mailbox refused it (Reject), dropped
// it (DropNewest) or pushed it out for a later message (DropOldest). It
// became a dead letter and the watcher never learnt of the stop: a router
// or supervisor-like actor kept a dead PID for good.
func TestBoundedMailboxWatcherGetsTerminated(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy mailbox.Overflow
	}{
		{"Reject", mailbox.Reject},
		{"DropNewest", mailbox.DropNewest},
		{"DropOldest", mailbox.DropOldest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := testkit.NewManualSystem(t)
			target := m.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
			var got []any
			// With DropOldest the Terminated is lost only when a message
			// comes after it while it waits in the mailbox: the watcher's
			// invoke middleware holds back its user messages (a rate limit)
			// once armed, so the Terminated waits there.
			hold := false
			mw := func() scheduler.Middleware { return holdMW{hold: &hold} }
			watcher := m.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
				switch msg := c.Message().(type) {
				case *actor.Started:
					c.Watch(target)
				case *actor.Terminated:
					got = append(got, msg.Who.ID)
				case string:
					got = append(got, msg)
				}
			}, actor.WithBoundedMailbox(1, tc.policy), actor.WithInvokeMiddleware(mw)))
			m.RunUntilIdle()
			require.Equal(t, 0, len(got))

			if tc.policy == mailbox.DropOldest {
				hold = true
				m.Root().Stop(target)
				m.RunUntilIdle()               // the Terminated waits in the watcher's mailbox
				m.Root().Send(watcher, "push") // and is pushed out by this
				hold = false
				m.Advance(time.Second)
			} else {
				m.Root().Stop(target)
				m.Root().Send(watcher, "fill") // full when the Terminated comes
				require.True(t, m.Step())      // the target stops; the watcher's turn is next
				m.RunUntilIdle()
			}
			require.Contains(t, got, target.ID, "the watcher never received the Terminated of its watched actor")
		})
	}
}

// holdMW breaks every invocation while *hold is set (a rate limit of no
// messages for 10 ms).
type holdMW struct{ hold *bool }

func (h holdMW) BeforeInvoke(ictx *scheduler.InvokeContext) scheduler.ControlFlow {
	if *h.hold {
		ictx.Set(scheduler.MetaResumeAfter, 10*time.Millisecond)
		return scheduler.Break
	}
	return scheduler.Continue
}

func (holdMW) AfterInvoke(*scheduler.InvokeContext, scheduler.InvokeResult) {}
