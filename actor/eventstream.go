package actor

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/fraktor-go/fraktor/internal/await"
)

// DefaultSubscriptionBuffer is the number of events a subscription holds
// before it starts dropping.
const DefaultSubscriptionBuffer = 1024

// EventStream is the system's publish/subscribe bus for runtime events
// (dead letters, extension status, cluster events) and user events.
//
// Publish never blocks: each subscription has a bounded buffer and its own
// delivery goroutine; when the buffer is full the event is dropped for that
// subscriber and counted (Subscription.Dropped). A subscriber's function runs
// on its delivery goroutine, one event at a time, in publish order.
//
// A panic in a subscriber's function is logged (Warn) and the subscription
// goes on with the next event; a panic in a predicate is logged and the
// event is not delivered to that subscriber. Neither reaches the
// publisher or ends the process.
type EventStream struct {
	mu      sync.Mutex
	subs    atomic.Pointer[[]*Subscription]
	running int           // delivery goroutines not yet ended; under mu
	drained chan struct{} // made by close while some run; closed by the last to end
	closed  bool
	buffer  int
	logger  *slog.Logger
}

// Subscription is one subscriber of an EventStream.
type Subscription struct {
	es      *EventStream
	fn      func(any)
	pred    func(any) bool
	ch      chan any
	mu      sync.RWMutex
	closed  bool
	dropped atomic.Uint64
}

func newEventStream(buffer int, logger *slog.Logger) *EventStream {
	if buffer <= 0 {
		buffer = DefaultSubscriptionBuffer
	}
	es := &EventStream{buffer: buffer, logger: logger}
	es.subs.Store(&[]*Subscription{})
	return es
}

// Subscribe calls fn for every event published from now on.
func (es *EventStream) Subscribe(fn func(event any)) *Subscription {
	return es.SubscribeWithPredicate(fn, nil)
}

// SubscribeWithPredicate calls fn for every event for which pred is true
// (pred runs on the publisher's goroutine and must be cheap).
func (es *EventStream) SubscribeWithPredicate(fn func(event any), pred func(event any) bool) *Subscription {
	if pred != nil {
		pred = es.guardPredicate(pred)
	}
	return es.subscribe(fn, pred)
}

// guardPredicate contains a panic in a user's predicate: it runs on the
// publisher's goroutine, which may be a worker, the timer goroutine or a
// connection's reader, none of which may die of it. The event is not
// delivered to that subscriber. Subscribe[T]'s own predicate cannot panic
// and is not wrapped.
func (es *EventStream) guardPredicate(pred func(any) bool) func(any) bool {
	return func(ev any) (ok bool) {
		defer func() {
			if r := recover(); r != nil {
				ok = false
				es.logger.Warn("event stream predicate panicked; event dropped for its subscriber", "type", typeName(ev), "panic", r)
			}
		}()
		return pred(ev)
	}
}

func (es *EventStream) subscribe(fn func(event any), pred func(event any) bool) *Subscription {
	s := &Subscription{es: es, fn: fn, pred: pred, ch: make(chan any, es.buffer)}
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.closed {
		s.closed = true
		close(s.ch)
		return s
	}
	old := *es.subs.Load()
	next := make([]*Subscription, len(old), len(old)+1)
	copy(next, old)
	next = append(next, s)
	es.subs.Store(&next)
	es.running++
	go s.deliver()
	return s
}

// Subscribe is the typed form: fn receives only events of type T.
func Subscribe[T any](es *EventStream, fn func(T)) *Subscription {
	return es.subscribe(func(e any) { fn(e.(T)) }, func(e any) bool {
		_, ok := e.(T)
		return ok
	})
}

// Unsubscribe stops deliveries to s; events already buffered are still
// delivered. It is idempotent, and does nothing for a nil s.
func (es *EventStream) Unsubscribe(s *Subscription) {
	if s == nil {
		return
	}
	es.mu.Lock()
	old := *es.subs.Load()
	next := make([]*Subscription, 0, len(old))
	for _, o := range old {
		if o != s {
			next = append(next, o)
		}
	}
	es.subs.Store(&next)
	es.mu.Unlock()
	s.close()
}

// Publish hands ev to every subscriber whose predicate accepts it.
func (es *EventStream) Publish(ev any) {
	for _, s := range *es.subs.Load() {
		if s.pred != nil && !s.pred(ev) {
			continue
		}
		s.offer(ev)
	}
}

// Len returns the number of subscriptions.
func (es *EventStream) Len() int { return len(*es.subs.Load()) }

// close ends every subscription and waits for their goroutines, or for
// ctx: a subscriber's function may block, and Shutdown's context bounds
// its wait for it as for everything else (TestShutdownBoundedByCtxWithBlockedSubscriber).
// With no delivery goroutine left (no subscriber, or only ended ones) it
// returns nil at once, whatever ctx, and so does it when they have ended
// by the time it looks: an ended ctx reports only what really did not
// finish (TestShutdownEndedCtxReportsOnlyUnfinished).
func (es *EventStream) close(ctx context.Context) error {
	es.mu.Lock()
	es.closed = true
	subs := *es.subs.Load()
	es.subs.Store(&[]*Subscription{})
	if es.running > 0 && es.drained == nil {
		es.drained = make(chan struct{})
	}
	drained := es.drained
	es.mu.Unlock()
	for _, s := range subs {
		s.close()
	}
	if drained == nil {
		return nil
	}
	if err := await.Done(ctx, drained); err != nil {
		return fmt.Errorf("actor: event stream subscribers: %w", err)
	}
	return nil
}

func (s *Subscription) offer(ev any) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return
	}
	select {
	case s.ch <- ev:
	default:
		s.dropped.Add(1)
	}
}

func (s *Subscription) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.ch)
	}
}

// deliver is the subscription's goroutine: it calls fn for each event
// until the subscription is closed, then counts itself out (close waits
// for the count to reach zero).
func (s *Subscription) deliver() {
	for ev := range s.ch {
		s.call(ev)
	}
	es := s.es
	es.mu.Lock()
	es.running--
	var drained chan struct{}
	if es.running == 0 {
		drained = es.drained // made by close, which lets no subscription start after it
	}
	es.mu.Unlock()
	if drained != nil {
		// The goroutine's last act: whoever waits for it (close,
		// System.Terminated) finds it returning, not still at work.
		close(drained)
	}
}

// call runs the subscriber's function on one event; a panic in it is
// logged and the subscription goes on (its goroutine is the runtime's, and
// a panic there would end the process).
func (s *Subscription) call(ev any) {
	defer func() {
		if r := recover(); r != nil {
			s.es.logger.Warn("event stream subscriber panicked", "type", typeName(ev), "panic", r)
		}
	}()
	s.fn(ev)
}

// Dropped returns how many events were dropped because the buffer was full.
func (s *Subscription) Dropped() uint64 { return s.dropped.Load() }
