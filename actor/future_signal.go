package actor

import (
	"context"
	"fmt"
)

// Futures that never leave the runtime (the one Request makes and waits
// for) are completed through a pooled signal channel instead of a channel
// of their own that is closed: a request then allocates the Future only.
// It is safe because a future completes once (its state's compare-and-swap
// admits one completion, which sends the one token), the Future itself is
// never reused (a late answer to its PID finds it completed and is
// dropped), and the waiter takes the token before it gives the channel
// back, so the channel returns to the pool empty with no sender left.
// Done, Result, Wait, ResultContext and PipeTo must not be used on such a
// future; nothing outside this file can reach one.
// TestRequestSignalAllocs and TestRequestSignalLateAnswer pin it.

// signalRequester is implemented by the runtime's own requesters (the root
// context and actor contexts); Request takes the pooled path with them and
// the ordinary RequestFuture path with any other Requester (a wrapper).
type signalRequester interface {
	requestSignal(ctx context.Context, pid *PID, msg any) *Future
}

// newSignalFuture is newFuture with no timeout and a pooled signal.
func (s *System) newSignalFuture(target *PID) *Future {
	ch, _ := s.signals.Get().(chan struct{})
	if ch == nil {
		ch = make(chan struct{}, 1)
	}
	return s.startFuture(&Future{done: ch, signal: true}, target, 0)
}

// signalDone wakes f's waiters on done, f's channel when complete read it:
// one token for a pooled signal, a close otherwise (none when no channel
// was made yet: a later waiter finds the future completed). Called once,
// by the completion that won.
func (f *Future) signalDone(done chan struct{}) {
	if f.signal {
		done <- struct{}{}
		return
	}
	if done != nil {
		close(done)
	}
}

// awaitSignal waits for f's answer or for ctx, like ResultContext, then
// gives the signal channel back to the pool.
func (f *Future) awaitSignal(ctx context.Context) (any, error) {
	if f.state.Load() == 0 { // about to block: fail at Shutdown (watchClose)
		f.awaitClose()
		f.wakeIdle() // see cell.requestSignal
	}
	select {
	case <-f.done:
	case <-ctx.Done():
		f.complete(nil, f.timeoutError(fmt.Errorf("%w: %w", ErrTimeout, ctx.Err())))
		<-f.done
	}
	f.sys.signals.Put(f.done)
	return f.result, f.err
}

// requestSignal from outside: the caller blocks on the answer next, so it
// may run the target's turn itself (sendAndRun), unless ctx has already
// ended: a caller that gave up does not start work it cannot interrupt.
func (r *RootContext) requestSignal(ctx context.Context, pid *PID, msg any) *Future {
	f := r.sys.newSignalFuture(pid)
	if done := ctx.Done(); done != nil {
		select {
		case <-done:
			r.sys.releaseDeferred(nil)
			r.sys.send(nil, pid, msg, &f.pidv)
			return f
		default:
		}
	}
	r.sys.sendAndRun(pid, msg, &f.pidv)
	return f
}

// requestSignal from inside a Receive: the Receive blocks on the answer
// next, so the worker first hands what it holds to the ready queue
// (scheduler.Worker.Release): the send scheduled the target into the
// worker's run-next slot (or it waits in the worker's local batch), where
// no other worker takes it, and the answer could not come before the
// request's timeout (TestRequestFromReceiveDoesNotStrandTheTarget). The
// waiter then wakes a parked worker for it (WakeIdle in awaitSignal,
// waitDone, ResultContext). RequestFuture releases too, since Result or
// Wait may follow; an actor that goes on without waiting (ReenterAfter,
// PipeTo) wakes nobody, and its worker takes the target back from the
// queue once its turn ends: one lock more than the slot
// (BenchmarkReenterAfter, docs/benchmarks.md).
func (c *cell) requestSignal(_ context.Context, pid *PID, msg any) *Future {
	f := c.sys.newSignalFuture(pid)
	c.send(pid, msg, &f.pidv)
	c.worker.Release()
	return f
}
