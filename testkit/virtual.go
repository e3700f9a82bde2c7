package testkit

import (
	"context"
	"fmt"
	"runtime/metrics"
	"time"
)

// What a VirtualTime cluster's clock drives, and what it does not
// (docs/testing.md, "Virtual time"): the registry's leases, renewals and
// expiries (timers of the clock, no goroutine of their own), every
// member's actor timers (receive timeouts, future timeouts, the attempt
// timeouts of grain requests), the placement's ticks, the wait-out, the
// retry backoff, remote's heartbeat pings, reconnect backoff and give-up,
// Pause. The members' workers, their connections and the goroutines
// behind a cluster request stay real goroutines, and what reads the wall
// clock reads it still: a blocking request's deadline (Request's ctx,
// RequestFuture's timeout), the activation timeout, remote's read
// deadline (HeartbeatTimeout, see virtualHeartbeatTimeout) and its dial,
// handshake and write timeouts.

// DefaultVirtualBudget is the virtual time AwaitConverged, and NewCluster
// with VirtualTime, let pass at most before they give up: as much as the
// wall-clock wait of a cluster on the system clock.
const DefaultVirtualBudget = 30 * time.Second

// virtualStep is the longest single move of the clock while a condition
// is awaited: the next timer's deadline when it is nearer. The placement
// ticks every 20 ms (FastTiming) and remote pings every 100 ms, so a
// cluster always has a timer due within one step; the bound only matters
// for a cluster configured with slower timing.
const virtualStep = 20 * time.Millisecond

// settleWait bounds the wall time given to the members' goroutines after
// each move of the clock before the condition is looked at again; settle
// returns earlier, as soon as the cluster is idle (idle: no worker busy,
// nothing queued for or on the wire between members but what a fault
// holds, no goroutine ready to run).
const settleWait = 20 * time.Millisecond

// Eventually fails the test unless cond becomes true within budget
// (0: DefaultVirtualBudget), and reports whether it did; call it from
// the test goroutine. On a cluster
// with VirtualTime, budget is virtual time: while cond is false it moves
// the clock to the next timer's deadline (at most 20 ms at a time), lets
// the members run what that set off, and looks again, so it returns with
// the clock at most one step past the moment cond held. On a cluster on
// the system clock it is testkit.Eventually, budget being wall time.
// msgAndArgs names the condition in the failure, as for Eventually.
//
// The members run on real goroutines even in virtual time: the virtual
// instant at which cond becomes true can differ from run to run (a reply
// that crosses a connection may arrive one step later); assert a bound
// on it, not its exact value.
func (tc *TestCluster) Eventually(cond func() bool, budget time.Duration, msgAndArgs ...any) bool {
	tc.t.Helper()
	if budget <= 0 {
		budget = DefaultVirtualBudget
	}
	if tc.manual == nil {
		ok := false
		Eventually(tc.t, func() bool { ok = cond(); return ok }, budget, msgAndArgs...)
		return ok
	}
	why := func() string {
		if cond() {
			return ""
		}
		return "condition not met"
	}
	if err := tc.advanceUntil(context.Background(), why, budget); err != nil {
		tc.t.Fatalf("testkit: Eventually: %v%s", err, formatMsg(msgAndArgs))
		return false
	}
	return true
}

// advanceUntil moves the virtual clock step by step until why returns ""
// or budget of virtual time has passed or ctx ends (the wall-clock
// bound). The error says which bound ended the wait and the last why.
func (tc *TestCluster) advanceUntil(ctx context.Context, why func() string, budget time.Duration) error {
	end := tc.manual.Now().Add(budget)
	for {
		tc.settle()
		w := why()
		if w == "" {
			return nil
		}
		now := tc.manual.Now()
		if !now.Before(end) {
			return fmt.Errorf("%s after %v of virtual time", w, budget)
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s at %v of virtual time: %w", w, budget-end.Sub(now), err)
		}
		step := min(virtualStep, end.Sub(now))
		if next, ok := tc.manual.NextDeadline(); ok && next.Sub(now) < step {
			step = max(next.Sub(now), 0)
		}
		tc.manual.Advance(step)
	}
}

// settle gives the members' goroutines the chance to run what the last
// move of the clock set off: it returns once the cluster is idle (idle:
// every running member's workers parked with nothing queued, nothing in
// flight between the members, no goroutine of the process ready to run),
// or after settleWait of wall time, whichever comes first. Without it the
// clock ran ahead of the members: attempts and activations timed out in
// virtual time before their replies were handled, and neither
// convergence nor a first grain call came within their budgets
// (TestVirtualClusterConvergesCallsAndRecovers). It polls every 100 µs:
// neither a worker pool, a remote node nor the scheduler publishes its
// state changes as events.
func (tc *TestCluster) settle() {
	tc.settles.Add(1)
	if tc.idle() {
		return
	}
	limit := time.NewTimer(settleWait)
	defer limit.Stop()
	tick := time.NewTicker(100 * time.Microsecond)
	defer tick.Stop()
	for {
		select {
		case <-limit.C:
			tc.settleTimeouts.Add(1)
			return
		case <-tick.C:
			if tc.idle() {
				return
			}
		}
	}
}

// idle reports whether nothing the last move of the clock set off is
// still on its way (idleOnce), twice in a row: a message that moved from
// a stage not yet looked at into one already looked at during the first
// look is seen by the second.
func (tc *TestCluster) idle() bool { return tc.idleOnce() && tc.idleOnce() }

// idleOnce looks at every stage of a message's way. A message goes from
// a worker of one member (its worker pool busy) to that member's remote
// queue (Stats.QueuedBytes), onto the wire (faultNet: written and not yet
// read), into the peer's reader (faultNet: read and not yet delivered)
// and into a mailbox there (that worker pool's queue). It looks in the
// order wire, worker pools, queues, and only trusts what it saw if the
// wire's activity counter did not move meanwhile: a message moves to the
// next stage without a write or a read only from a worker to its queue
// (seen by the later look at the queues) and from a reader into a mailbox
// (seen by the later look at the pools). Goroutines that are none of
// these (the one behind a cluster request, a remote writer woken by its
// queue, a reader woken by the wire, an event stream's subscriber) are
// seen while they are ready to run or running (schedIdle, before and
// after the rest).
//
// What a fault holds is not waited for: a write a cut holds is not on the
// wire, and a member's queue is not looked at while it may hold envelopes
// for a peer it cannot reach now (faultNet.mayHold: a cut link of its
// own, or a failed dial or lost connection less than a reconnect backoff
// ago). Remote counts queued bytes per node, not per peer, so such a
// member's queue to its other peers is not waited for either.
func (tc *TestCluster) idleOnce() bool {
	if !schedIdle() {
		return false
	}
	act := tc.net.activity.Load()
	if !tc.net.quiet() {
		return false
	}
	up := tc.Up()
	ms := make([]*member, len(up))
	for k, i := range up {
		m := tc.member(i)
		ms[k] = m
		if c := m.coord; c.Queued() > 0 || c.Parked() < c.Workers() {
			return false
		}
	}
	for _, m := range ms {
		st := m.node.Stats()
		tc.net.noteDeferred(m.addr, st.DialsDeferred)
		if st.QueuedBytes > 0 && !tc.net.mayHold(m.addr) {
			return false
		}
	}
	return tc.net.activity.Load() == act && schedIdle()
}

// schedIdle reports whether no goroutine of the process is ready to run
// or running but the caller's, as far as the runtime's scheduler metrics
// say (they are approximate; Go 1.26: an older runtime does not have them,
// and then it reports true). A goroutine blocked on anything (a channel,
// a lock, a socket, a timer) is not ready to run. Reading them takes
// some 300 ns under the race detector.
func schedIdle() bool {
	s := [2]metrics.Sample{{Name: "/sched/goroutines/runnable:goroutines"}, {Name: "/sched/goroutines/running:goroutines"}}
	metrics.Read(s[:])
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return true
	}
	return s[0].Value.Uint64() == 0 && s[1].Value.Uint64() <= 1
}
