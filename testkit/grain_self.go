package testkit

import (
	"errors"
	"fmt"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// errSelfBlocking is the cause of a blocking call of a grain under
// NewGrain to its own identity.
var errSelfBlocking = errors.New("testkit: a grain's blocking call to itself waits for its own turn to end")

// selfCall delivers call, a call of the grain under test to its own
// identity, to the grain, as the cluster would: the grain is its own
// callee. It runs on the caller's turn (RouteGrain), so it only sends:
//
//   - a Send arrives in the grain's mailbox, with no sender, as a
//     cluster's Send does;
//   - a future's request arrives there at once (behind what is queued,
//     so in the order of the grain's other calls and Sends to itself),
//     with a relay actor as its sender, which answers the call with what
//     the grain responds: a typed grain's error as the method's
//     *cluster.GrainError, as CallFuture would. The grain handles it on
//     a later turn, in the same run of the system, and the future
//     completes (PipeTo, ReenterAfter) with its answer or at its timeout;
//   - a blocking call cannot be answered: the grain that would answer is
//     the caller, waiting on its own turn. In the cluster it waits out
//     its deadline (the message stays queued behind the turn that waits
//     for it) and fails with cluster.ErrTimeout; here it fails so at
//     once, and the test with an error that says to call the future
//     variant instead, since a grain that does this is a bug.
func (g *Grain) selfCall(call *cluster.GrainCall) {
	root := g.Sys.Root()
	switch {
	case call.OneWay():
		root.Send(g.PID, call.Message)
	case call.Blocking():
		g.t.Errorf("testkit: grain %s made a blocking call (Request, Call, a client's blocking method) to itself: it waits for its own turn to end, so in a cluster it fails with cluster.ErrTimeout at its deadline; call the future variant (RequestFuture, CallFuture, the client's Future method) and PipeTo or ReenterAfter", g.Identity)
		call.Fail(fmt.Errorf("%w: %s: %w", cluster.ErrTimeout, call.Identity, errSelfBlocking))
	default:
		relay := root.SpawnPrefix(actor.PropsFromFunc(func(c actor.Context) {
			switch m := c.Message().(type) {
			case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Restarting:
				return
			case *actor.DeadLetterResponse:
				// The activation stopped before it took the request.
				call.Fail(fmt.Errorf("%w: %s: the activation stopped before it answered", cluster.ErrTimeout, call.Identity))
			default:
				if _, err := cluster.GrainReply[any](m); err != nil {
					call.Reply(err) // *cluster.GrainError: the method's error
				} else {
					call.Reply(m)
				}
			}
			c.Stop(c.Self())
		}), "selfcall")
		root.SendWithSender(g.PID, call.Message, relay)
	}
}
