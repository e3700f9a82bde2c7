package testkit

import (
	"context"
	"fmt"
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
// returns earlier, as soon as every member's workers are idle.
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
// move of the clock set off: it returns once every running member's
// workers are parked with nothing queued, or after settleWait of wall
// time, whichever comes first. Without it the clock ran ahead of the
// members: attempts and activations timed out in virtual time before
// their replies were handled, and neither convergence nor a first grain
// call came within their budgets (TestVirtualClusterConvergesCallsAndRecovers).
// It polls every 100 µs: no state change of a worker pool is published
// as an event.
func (tc *TestCluster) settle() {
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
			return
		case <-tick.C:
			if tc.idle() {
				return
			}
		}
	}
}

// idle reports whether no running member has work queued or running.
func (tc *TestCluster) idle() bool {
	for _, i := range tc.Up() {
		c := tc.member(i).coord
		if c.Queued() > 0 || c.Parked() < c.Workers() {
			return false
		}
	}
	return true
}
