package testkit

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

// EventProbe records the events published on a system's EventStream so a
// test can assert on them, like Probe does for messages. It subscribes when
// it is made and unsubscribes at test cleanup. Its own queue never drops;
// the subscription's buffer (SystemConfig.EventBuffer) can, and a failure
// message then says how many events it dropped.
//
// In deterministic mode every expectation runs the system until idle and
// then waits for the subscription's delivery goroutine to hand over every
// event published so far (a channel wait, bounded by DefaultTimeout of wall
// time); timeouts are virtual time, as for Probe.
//
// An EventProbe's methods are for the test goroutine.
type EventProbe struct {
	waiter
	t       testing.TB
	es      *actor.EventStream
	sub     *actor.Subscription
	filters []func(any) bool
	// offered counts the events the predicate accepted (on the publisher's
	// goroutine), delivered those the delivery goroutine handed over; the
	// subscription counts those it dropped.
	offered, delivered atomic.Uint64
}

// NewEventProbe subscribes to the EventStream of sys. With filters, an
// event is recorded when any filter accepts it (see OfType); with none,
// every event is. Filters run on the publisher's goroutine and must be
// cheap and safe for concurrent use.
func NewEventProbe(t testing.TB, sys *actor.System, filters ...func(event any) bool) *EventProbe {
	t.Helper()
	ep := &EventProbe{t: t, es: sys.EventStream(), filters: filters}
	ep.waiter = waiter{box: newInbox(), drv: driverFor(sys)}
	if ep.drv != nil {
		ep.flush = ep.awaitDeliveries
	}
	ep.sub = ep.es.SubscribeWithPredicate(ep.record, ep.accept)
	t.Cleanup(func() { ep.es.Unsubscribe(ep.sub) })
	return ep
}

// OfType is an EventProbe filter that accepts events of type T.
func OfType[T any]() func(event any) bool {
	return func(e any) bool {
		_, ok := e.(T)
		return ok
	}
}

func (ep *EventProbe) accept(e any) bool {
	ok := len(ep.filters) == 0
	for _, f := range ep.filters {
		if f(e) {
			ok = true
			break
		}
	}
	if ok {
		ep.offered.Add(1)
	}
	return ok
}

func (ep *EventProbe) record(e any) {
	ep.box.mu.Lock()
	ep.box.items = append(ep.box.items, Received{Msg: e})
	ep.box.mu.Unlock()
	ep.delivered.Add(1) // before the signal, so a woken waiter sees it
	ep.box.signal()
}

// awaitDeliveries waits until every event accepted so far has been handed
// over or dropped. In deterministic mode every publish made by the system
// has returned by now, so the count it waits for is final.
func (ep *EventProbe) awaitDeliveries() {
	var timer *time.Timer
	for ep.delivered.Load()+ep.sub.Dropped() < ep.offered.Load() {
		if timer == nil {
			timer = time.NewTimer(DefaultTimeout)
			defer timer.Stop()
		}
		select {
		case <-ep.box.wake:
		case <-timer.C:
			return // the expectation reports what it has, with the in-flight count
		}
	}
}

// Len returns the number of events recorded and not yet taken. It does not
// run the system.
func (ep *EventProbe) Len() int { return ep.box.len() }

// Subscription is the probe's EventStream subscription.
func (ep *EventProbe) Subscription() *actor.Subscription { return ep.sub }

func (ep *EventProbe) fatalf(format string, args ...any) {
	ep.t.Helper()
	msg := fmt.Sprintf(format, args...)
	if n := ep.sub.Dropped(); n > 0 {
		msg += fmt.Sprintf(" (the subscription dropped %d events: its buffer was full)", n)
	}
	done := ep.delivered.Load() + ep.sub.Dropped() // before offered: never more than it
	if off := ep.offered.Load(); off > done {
		msg += fmt.Sprintf(" (%d events still in delivery)", off-done)
	}
	ep.t.Fatalf("testkit: EventProbe: %s", msg)
}

// Receive takes the next recorded event if one arrives within timeout,
// without failing the test when none does (timeouts as for Probe.Receive).
func (ep *EventProbe) Receive(timeout time.Duration) (any, bool) {
	r, ok := ep.next(ep.normalize(timeout, DefaultTimeout))
	return r.Msg, ok
}

// ExpectEvent takes the next recorded event, waiting up to timeout
// (0: DefaultTimeout; virtual time in deterministic mode), and fails the
// test unless it is a T. It returns the event.
func ExpectEvent[T any](ep *EventProbe, timeout time.Duration) T {
	ep.t.Helper()
	var zero T
	wait := ep.normalize(timeout, DefaultTimeout)
	r, ok := ep.next(wait)
	if !ok {
		ep.fatalf("ExpectEvent[%s]: got no event %s", typeName[T](), ep.within(wait))
		return zero
	}
	v, ok := r.Msg.(T)
	if !ok {
		ep.fatalf("ExpectEvent[%s]: got %s instead", typeName[T](), r)
		return zero
	}
	return v
}

// ExpectNoEvent fails the test if an event is recorded within d
// (0: DefaultNoMsgWait); in deterministic mode as Probe.ExpectNoMsg.
func (ep *EventProbe) ExpectNoEvent(d time.Duration) {
	ep.t.Helper()
	wait := ep.normalize(d, DefaultNoMsgWait)
	if r, ok := ep.next(wait); ok {
		ep.fatalf("ExpectNoEvent: got %s %s", r, ep.within(wait))
	}
}

// FishForEvent takes events until one is a T for which pred is true (nil
// pred: any T), waiting up to timeout in all, and returns it. Skipped
// events are gone; when none matches, the failure lists them.
func FishForEvent[T any](ep *EventProbe, pred func(T) bool, timeout time.Duration) T {
	ep.t.Helper()
	wait := ep.normalize(timeout, DefaultTimeout)
	v, skipped, ok := fish(ep.next, ep.remaining(wait), pred)
	if ok {
		return v
	}
	ep.fatalf("FishForEvent[%s]: no match %s; skipped %s", typeName[T](), ep.within(wait), describeAll(skipped))
	return v
}
