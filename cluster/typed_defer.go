package cluster

import (
	"fmt"
	"sync"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster/internal/clusterpb"
)

// DeferredReply is the reply to a typed grain's request that its method
// sends later, typically after calling another grain without blocking:
//
//	func (a *account) Transfer(ctx cluster.GrainContext, req *shopv1.TransferRequest) (*shopv1.Balance, error) {
//		reply := cluster.DeferReply[*shopv1.Balance](ctx)
//		to := shopv1.NewAccountClient(cluster.Get(ctx.System()), req.GetTo())
//		ctx.ReenterAfter(to.DepositFuture(&shopv1.DepositRequest{Units: req.GetUnits()}, 0),
//			func(res any, err error) { reply.Reply(a.balance(), err) }) // on the grain's turn
//		return nil, nil // the runtime sends nothing now
//	}
//
// The caller waits as for any request, within its deadline. The first Reply
// counts; later ones are dropped. Reply may be called from any goroutine,
// but ReenterAfter's callback, which runs on the grain's own turn, is where
// the grain's state is safe to read. A deferred reply the method has not
// sent when its activation stops or restarts (passivation, handover, a
// panic) is answered with a *GrainError of CodeAbandoned then, so the
// caller never waits for an activation that is gone. Until it is sent, the
// activation is not idle (WithIdleTimeout): the kind's idle timeout does
// not passivate a grain that waits for the grain it called, and its idle
// clock starts when its last deferred reply is sent.
type DeferredReply[T any] struct{ d *deferred }

// Reply sends reply, or err (as a *GrainError, like a method's returned
// error), to the caller; a nil message arrives as an empty one, and one
// whose required (proto2) fields are not set as a *GrainError of
// CodeInternal naming them, as a method's reply does. It reports
// whether this call sent it (false: it was sent or abandoned already).
func (r *DeferredReply[T]) Reply(reply T, err error) bool {
	if err != nil {
		return r.d.send(wireError(err))
	}
	// A nil message reaches the caller as an empty one, as a nil a method
	// returns does (generated Dispatch) and as it would after crossing the
	// wire; sent as is, a caller on this member would get a nil pointer
	// with a nil error.
	return r.d.send(checkedReply(r.d.id, emptyIfNil(reply)))
}

// DeferReply marks the request the method is handling as answered later
// through the returned DeferredReply: the runtime does not send the
// method's return values (an error it returns is still sent at once, and
// the deferred reply is dropped). T is the method's reply type. ctx may be
// the grain's own wrapper of its GrainContext (a struct embedding it). In
// ReceiveMessage it defers the reply to a message that came with a sender,
// abandoned as a method's is. Outside a typed grain's method and
// ReceiveMessage (in Activated, in a ReenterAfter callback), or for a
// message sent without a sender, the returned reply goes nowhere.
func DeferReply[T any](ctx GrainContext) *DeferredReply[T] {
	var t *typedContext
	if ctx != nil {
		t = ctx.typed() // under the grain's own wrapper, if any
	}
	if t == nil || t.Sender() == nil {
		return &DeferredReply[T]{d: &deferred{done: true}}
	}
	if t.deferred == nil {
		d := &deferred{sys: t.System(), to: t.Sender(), id: t.id}
		if w := pendingOf(t.Context); w != nil {
			// Pending work until sent: the activation is not idle.
			d.w = w
			w.beginWait()
		}
		t.deferred = d
	}
	return &DeferredReply[T]{d: t.deferred}
}

// deferred is one deferred reply: where it goes and whether it went.
type deferred struct {
	mu   sync.Mutex
	done bool
	sys  *actor.System
	to   *actor.PID
	id   Identity       // the grain's, for the error of a reply that cannot be sent
	w    pendingCounter // the grain's, which counts it as pending work; nil when nothing does
}

// send sends msg unless a reply was sent already.
func (d *deferred) send(msg any) bool {
	d.mu.Lock()
	if d.done {
		d.mu.Unlock()
		return false
	}
	d.done = true
	d.mu.Unlock()
	d.sys.Root().Send(d.to, msg)
	if d.w != nil {
		d.w.endWait()
	}
	return true
}

// drop ends d without sending anything (its request was stashed): a later
// Reply goes nowhere, and d is no longer the grain's pending work.
func (d *deferred) drop() {
	d.mu.Lock()
	if d.done {
		d.mu.Unlock()
		return
	}
	d.done = true
	d.mu.Unlock()
	if d.w != nil {
		d.w.endWait()
	}
}

func (d *deferred) sent() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.done
}

// keepDeferred records d among the grain's pending deferred replies,
// forgetting those sent since.
func (g *typedGrain) keepDeferred(d *deferred) {
	kept := g.pending[:0]
	for _, p := range g.pending {
		if !p.sent() {
			kept = append(kept, p)
		}
	}
	clear(g.pending[len(kept):])
	g.pending = append(kept, d)
}

// abandonDeferred answers every deferred reply still pending with
// CodeAbandoned (the activation is stopping or restarting).
func (g *typedGrain) abandonDeferred() {
	for _, p := range g.pending {
		p.send(&clusterpb.GrainError{Code: CodeAbandoned, Message: fmt.Sprintf("grain %s stopped before it replied", g.ctx.id)})
	}
	g.pending = nil
}
