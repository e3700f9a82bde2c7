package testkit

import (
	"errors"
	"fmt"
	"slices"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// errSelfBlocking is the cause of a blocking call of a grain under
// NewGrain to its own identity.
var errSelfBlocking = errors.New("testkit: a grain's blocking call to itself waits for its own turn to end")

// errSelfNeverTaken is the cause of a self-call that found the identity's
// activation stopped before it took the request more often than the
// cluster's retry policy attempts a request.
var errSelfNeverTaken = errors.New("testkit: each activation stopped before it took the request")

// selfCall delivers call, a call of the grain under test to its own
// identity, to the grain, as the cluster would: the grain is its own
// callee. It runs on the caller's turn (RouteGrain), so it only sends:
//
//   - a Send arrives in the grain's mailbox, with no sender, as a
//     cluster's Send does;
//   - a future's request arrives there at once (behind what is queued,
//     so in the order of the grain's other calls and Sends to itself),
//     with a relay actor as its sender (selfRelay), which answers the
//     call with what the grain responds: a typed grain's error as the
//     method's *cluster.GrainError, as CallFuture would. The grain
//     handles it on a later turn, in the same run of the system, and the
//     future completes (PipeTo, ReenterAfter) with its answer or at its
//     timeout;
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
		if call.Message != nil { // the cluster drops a Send of nil (cluster.Send)
			// To the activation, or, when it has stopped, to the host's
			// redirect, which starts the next one (grain_host.go).
			root.Send(g.PID, call.Message)
		}
	case call.Blocking():
		g.t.Errorf("testkit: grain %s made a blocking call (Request, Call, a client's blocking method) to itself: it waits for its own turn to end, so in a cluster it fails with cluster.ErrTimeout at its deadline; call the future variant (RequestFuture, CallFuture, the client's Future method) and PipeTo or ReenterAfter", g.Identity)
		call.Fail(fmt.Errorf("%w: %s: %w", cluster.ErrTimeout, call.Identity, errSelfBlocking))
	default:
		r := &selfRelay{g: g, call: call}
		r.pid = root.SpawnPrefix(actor.PropsFromFunc(r.receive), "selfcall")
		r.send()
	}
}

// selfRelay is the sender of a future self-call's request: it answers the
// call with the grain's response, and ends with the call where it can
// tell, as the cluster's request attempt does:
//
//   - when the activation it sent the request to stops before taking it
//     (a stop overtakes queued messages), the cluster's attempt is told
//     of the dead letter and the request is sent again, which activates
//     the grain: the relay has the host (grain_host.go) start the
//     identity's next activation, unless
//     one runs already, and sends the request there. When that activation
//     fails to start, the call fails with its
//     *cluster.ActivationFailedError; when the request was not taken
//     after as many attempts as the cluster's default retry policy makes,
//     with cluster.ErrTimeout.
//   - when the activation that took the request stops without answering
//     it, nothing can answer it any more: the relay ends, and the call
//     fails with cluster.ErrTimeout at its timeout, as a cluster's
//     request whose attempt timeout is its deadline (the default) does.
//
// An actor sender hears of no dead letter (only a future does), so the
// Grain tells the relay (selfEnded) from the activation's Stopped
// (Grain.ended); it knows the request was taken from the activation's
// receive middleware (Grain.track), which sees the relay as the sender.
// Its fields are used on the goroutine that drives the system; the Grain
// reads them under its mu.
type selfRelay struct {
	g        *Grain
	call     *cluster.GrainCall
	pid      *actor.PID
	seq      uint64 // the token Seq of the activation the request went to
	taken    bool   // that activation took it
	attempts int
}

// selfEnded tells a relay that the activation it sent its request to has
// stopped.
type selfEnded struct{}

// send sends the request to the current activation, or, when it has
// stopped, asks the host to start the next one and send it there (as a
// request to an identity whose activation ended does in the cluster).
func (r *selfRelay) send() {
	g := r.g
	if g.isStopped() {
		g.Sys.Root().Send(g.host, hostRelay{r})
		return
	}
	r.post()
}

// post records the request as sent to the current activation and sends
// it there.
func (r *selfRelay) post() {
	g := r.g
	g.mu.Lock()
	r.seq, r.taken = g.Token.Seq, false
	r.attempts++
	if !slices.Contains(g.relays, r) {
		g.relays = append(g.relays, r)
	}
	g.mu.Unlock()
	g.Sys.Root().SendWithSender(g.PID, r.call.Message, r.pid)
}

// spawnFailed ends the relay when the host could not start the activation
// for its request.
func (r *selfRelay) spawnFailed(err error) {
	r.call.Fail(fmt.Errorf("%w: %s: %w", cluster.ErrTimeout, r.call.Identity, err))
	r.g.Sys.Root().Stop(r.pid)
}

func (r *selfRelay) receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *actor.Started, *actor.Stopping, *actor.Restarting:
		return
	case *actor.Stopped:
		r.forget()
		return
	case selfEnded:
		if !r.again() {
			c.Stop(c.Self())
		}
		return
	default:
		if _, err := cluster.GrainReply[any](m); err != nil {
			r.call.Reply(err) // *cluster.GrainError: the method's error
		} else {
			r.call.Reply(m)
		}
	}
	c.Stop(c.Self())
}

// again handles the end of the activation the request went to: it sends
// the request to the next activation and reports true when the relay
// goes on, or answers the call (or leaves it to its timeout) and reports
// false.
func (r *selfRelay) again() bool {
	g := r.g
	g.mu.Lock()
	taken, seq, cur, startErr := r.taken, r.seq, g.Token.Seq, g.startErr
	g.mu.Unlock()
	switch {
	case taken:
		return false // the call fails at its timeout
	case seq == cur && startErr != nil:
		r.call.Fail(startErr)
		return false
	case r.attempts >= cluster.DefaultRetryPolicy().MaxAttempts:
		r.call.Fail(fmt.Errorf("%w: %s: %w (%d attempts)", cluster.ErrTimeout, r.call.Identity, errSelfNeverTaken, r.attempts))
		return false
	}
	r.send()
	return true
}

// forget drops the relay from the Grain's records.
func (r *selfRelay) forget() {
	g := r.g
	g.mu.Lock()
	g.relays = slices.DeleteFunc(g.relays, func(x *selfRelay) bool { return x == r })
	g.mu.Unlock()
}
