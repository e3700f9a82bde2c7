package actor

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/fraktor-go/fraktor/internal/await"
)

// termination is what Terminated waits for once Shutdown has done its
// part.
type termination struct {
	done  chan struct{} // closed by terminate: Terminated's channel
	pools chan struct{} // closed by terminate once the worker pools' goroutines have returned
	// events is the event stream's drained channel, read by the first
	// Shutdown once the stream is closed; nil when no delivery goroutine
	// was left then.
	events <-chan struct{}
	// gate: the first Shutdown's last step and the root guardian's stop
	// each add one; the second to arrive runs terminate. A goroutine that
	// waits for the rest is started only once the actor trees have
	// stopped, so a tree that never stops leaves no waiter behind it.
	gate atomic.Int32
}

func (t *termination) init() {
	t.done = make(chan struct{})
	t.pools = make(chan struct{})
}

// Terminated returns a channel that is closed once the system has ended:
// Shutdown has run to its end and every goroutine the system started has
// returned, those of the worker pools (shared and blocking), the
// EventStream's deliveries, the timers' callbacks, and those of the
// extensions as far as they tell (an extension's goroutines count as
// ended when its Shutdown returns, or, when it is an extension.Lingerer,
// when its Terminated channel closes). It stays open until Shutdown is
// called, and for good while something never returns (a Receive or a
// Stopped that blocks for ever, a subscriber that never returns).
//
// After a Shutdown that returned nil it is closed already. After one
// whose ctx ended first, the stop goes on (see Shutdown), and it closes
// once what was left has ended: wait on it before a process exits, or
// before a test checks for leaked goroutines. One goroutine of the system
// waits for the rest once the actors have stopped, and returns right after
// closing it. It is a channel so that the wait can be bounded by a select;
// a later Shutdown(ctx) waits for it too and names what is still running
// when its ctx ends.
func (s *System) Terminated() <-chan struct{} { return s.term.done }

// terminateWhenDone is the first Shutdown's last step. finished: its
// result is nil, so everything has stopped and terminate runs here, where
// it only waits for goroutines that are returning (the pools' workers
// that ran their last runnable): Terminated is closed before Shutdown
// returns nil. The root guardian has passed the gate then, as Shutdown
// found guardiansDone closed.
func (s *System) terminateWhenDone(finished bool) {
	s.term.events = s.events.drainedChan()
	if s.term.gate.Add(1) != 2 {
		return // the root guardian's stop runs terminate
	}
	if finished {
		s.terminate()
		return
	}
	go s.terminate() //nolint: tracked by Terminated
}

// terminate waits, once the actor trees have stopped and Shutdown has
// done its part, for the goroutines still returning, then closes
// Terminated. It never runs on a worker of the system's pools.
func (s *System) terminate() {
	// The pools are closed already (by Shutdown, or by the root
	// guardian's stop when they closed late): these wait for their
	// workers to return.
	if s.coord != nil {
		_ = s.coord.Shutdown(context.Background())
	}
	if b := s.blockingPool(); b != nil {
		_ = b.Shutdown(context.Background())
	}
	close(s.term.pools)
	if s.exts != nil {
		_ = s.exts.AwaitTerminated(context.Background())
	}
	if ch := s.term.events; ch != nil {
		<-ch
	}
	close(s.term.done)
}

// awaitTerminated is a later Shutdown's wait, after the first has
// returned: nil once Terminated is closed, else, when ctx ends, the parts
// still running.
func (s *System) awaitTerminated(ctx context.Context) error {
	if _, ok := s.dispatcher.(stepper); ok && s.coord == nil {
		// Nothing runs a manual dispatcher but its callers: drive it
		// until the trees have stopped. When it stalls (an actor on
		// another dispatcher has yet to stop), say so at once: what
		// finishes later may queue work only a caller runs, and a passive
		// wait would never see it done
		// (TestReview6LaterShutdownOnManualDispatcherDoesNotWaitForItself);
		// the caller calls Shutdown again.
		if err := s.await(ctx, s.guardiansDone); err != nil && ctx.Err() == nil {
			return fmt.Errorf("actor: stopping actors: %w", err)
		}
	}
	if await.Done(ctx, s.term.done) == nil {
		return nil
	}
	if err := s.stillRunning(ctx); err != nil {
		return err
	}
	// Every part has ended meanwhile: terminate has only returns left to
	// wait for, or is closing Terminated.
	<-s.term.done
	return nil
}

// stillRunning lists the parts of the system that have not ended, each
// wrapping ctx's error, in the order and words of Shutdown's error.
func (s *System) stillRunning(ctx context.Context) error {
	cause := ctx.Err()
	var errs []error
	if s.exts != nil {
		errs = append(errs, s.exts.AwaitTerminated(ctx))
	}
	systemDone := s.guardiansDone // the root guardian stops after both trees
	if !await.Closed(s.userDone) {
		errs = append(errs, fmt.Errorf("actor: stopping user actors: %w", cause))
		systemDone = s.systemDone
	}
	if !await.Closed(systemDone) {
		errs = append(errs, fmt.Errorf("actor: stopping system actors: %w", cause))
	}
	if !await.Closed(s.term.pools) {
		if s.coord != nil {
			errs = append(errs, fmt.Errorf("actor: stopping the worker pool: %w", cause))
		}
		if s.blockingPool() != nil {
			errs = append(errs, fmt.Errorf("actor: stopping the blocking pool: %w", cause))
		}
	}
	if ch := s.term.events; ch != nil && !await.Closed(ch) {
		errs = append(errs, fmt.Errorf("actor: event stream subscribers: %w", cause))
	}
	return errors.Join(errs...)
}

// drainedChan returns the channel that close made for the delivery
// goroutines still running then (closed by the last to end), or nil when
// none was. Called after close.
func (es *EventStream) drainedChan() <-chan struct{} {
	es.mu.Lock()
	defer es.mu.Unlock()
	return es.drained
}
