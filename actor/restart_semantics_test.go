package actor_test

import (
	"testing"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// What docs/actors.md ("Supervision", "Stash and Become") tells a new user
// about a restart: the message that failed is not delivered again, the
// rest of the mailbox stays, the behaviour returns to Receive and the
// stash is re-queued ahead of the mailbox.
func TestRestartDropsFailedMessageResetsBehaviourRequeuesStash(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	p := testkit.NewManualProbe(t, sys)
	var stashing actor.ReceiveFunc = func(c actor.Context) {
		switch m := c.Message().(type) {
		case string:
			if m == "boom" {
				panic("boom")
			}
			c.Send(p.PID(), "become:"+m)
		case int:
			c.Stash()
		}
	}
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case string:
			if m == "become" {
				c.Become(stashing)
				return
			}
			c.Send(p.PID(), "receive:"+m)
		case int:
			c.Send(p.PID(), m)
		}
	}))
	for _, m := range []any{"become", 1, 2, "boom", "after"} {
		sys.Root().Send(pid, m)
	}
	p.ExpectMsgEqual(1, 0)
	p.ExpectMsgEqual(2, 0)
	p.ExpectMsgEqual("receive:after", 0)
	p.ExpectNoMsg(0)
}
