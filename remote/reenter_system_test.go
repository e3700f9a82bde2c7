package remote_test

import (
	"fmt"
	"testing"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// ReenterAfter on a request to an actor on another node (real
// TCP over loopback): the callback runs on the asking actor's turn with
// the remote answer.
func TestReenterAfterRemoteRequest(t *testing.T) {
	sysA, _ := startSystem(t, "a", testConfig(t))
	sysB, _ := startSystem(t, "b", testConfig(t))
	echo := remotePID(echoOn(t, sysB, "echo", "b"))
	probe := testkit.NewProbe(t, sysA)
	asker := sysA.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(string); ok {
			seen := 0 // actor state, touched only on the actor's turn
			c.ReenterAfter(c.RequestFuture(echo, &Echo{Text: m}, wait), func(res any, err error) {
				seen++
				if err != nil {
					c.Send(probe.PID(), err.Error())
					return
				}
				r := res.(*EchoReply)
				c.Send(probe.PID(), fmt.Sprintf("%s by %s, call %d", r.Text, r.By, seen))
			})
		}
	}))
	sysA.Root().Send(asker, "over the wire")
	probe.ExpectMsgEqual("over the wire by b, call 1", wait)
}
