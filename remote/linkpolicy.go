package remote

import (
	"time"

	"github.com/fraktor-go/fraktor/internal/backoff"
)

// linkPolicy decides, for an endpoint without a connection, whether to dial
// now, wait, or give the peer up. It is pure: the endpoint's goroutine tells
// it the time (from the Node's clock) and what happened, and carries out the
// action it returns, so the policy is tested with made-up times.
//
// The rules: after a lost connection the first redial is immediate; after
// the n-th failed dial the next waits backoff.JitteredFrom(n) (exponential
// from backoffMin to backoffMax, equal jitter); once the peer has been
// unreachable for giveUpAfter (counted from the loss, or from the first
// failed dial of a peer never reached), the endpoint gives up. A wait never
// runs past the give-up time.
//
// A connection lost less than backoffMax after it was established is a
// flap: the redial after the first flap is immediate, as after any loss,
// but after the n-th flap in a row (n ≥ 2) it waits
// backoff.JitteredFrom(n-1). Why: a peer that completes the handshake and
// closes at once (hostile, or one whose reader refuses what this node
// sends) otherwise had this node reconnect in a loop without a pause, some
// 12,000 connections a second on loopback (TestFlappingPeerBacksOff).
type linkPolicy struct {
	backoffMin, backoffMax time.Duration
	giveUpAfter            time.Duration
	rand                   backoff.Rand // jitter source; nil: the process-wide one

	failures  int       // failed dials since the last connection
	flaps     int       // connections lost within backoffMax of being established, in a row
	upSince   time.Time // when the last connection was established; zero: none yet
	downSince time.Time // when the peer became unreachable; zero while reachable
	retryAt   time.Time // no dial before this

	// A dial the Node's dial budget refused (budgetRefused) waits for its
	// next backoff slot: deferUntil, after deferrals refusals in a row.
	// Only a budgeted dial waits for it, so that an endpoint whose first
	// dial was deferred (it only answered a peer-named address) dials at
	// once when local code sends to it.
	deferrals  int
	deferUntil time.Time
}

// linkActionKind is what the endpoint should do next.
type linkActionKind uint8

const (
	linkDial   linkActionKind = iota + 1 // dial now
	linkWait                             // wait (for at most wait), then ask again
	linkGiveUp                           // terminate the endpoint: the peer is unreachable
)

// linkAction is the policy's answer.
type linkAction struct {
	kind linkActionKind
	wait time.Duration // linkWait: how long at most
	down time.Duration // linkGiveUp: how long the peer was unreachable
}

func newLinkPolicy(cfg *Config, r backoff.Rand) linkPolicy {
	return linkPolicy{backoffMin: cfg.ReconnectBackoffMin, backoffMax: cfg.ReconnectBackoffMax, giveUpAfter: cfg.GiveUpAfter, rand: r}
}

// next returns the action at now; budgeted says whether the dial it may
// return takes from the Node's dial budget.
func (p *linkPolicy) next(now time.Time, budgeted bool) linkAction {
	var giveUpAt time.Time
	if !p.downSince.IsZero() {
		giveUpAt = p.downSince.Add(p.giveUpAfter)
		if !now.Before(giveUpAt) {
			return linkAction{kind: linkGiveUp, down: now.Sub(p.downSince)}
		}
	}
	until := p.retryAt
	if budgeted && p.deferUntil.After(until) {
		until = p.deferUntil
	}
	if now.Before(until) {
		if !giveUpAt.IsZero() && giveUpAt.Before(until) {
			until = giveUpAt
		}
		return linkAction{kind: linkWait, wait: until.Sub(now)}
	}
	return linkAction{kind: linkDial}
}

// dialFailed records a failed dial at now.
func (p *linkPolicy) dialFailed(now time.Time) {
	p.failures++
	if p.downSince.IsZero() {
		p.downSince = now
	}
	p.retryAt = now.Add(backoff.JitteredFrom(p.rand, p.failures, p.backoffMin, p.backoffMax))
}

// budgetRefused records at now that the dial budget refused a dial: the
// next budgeted dial waits backoff.JitteredFrom(n) after the n-th refusal
// in a row. The give-up clock runs meanwhile.
func (p *linkPolicy) budgetRefused(now time.Time) {
	p.deferrals++
	if p.downSince.IsZero() {
		p.downSince = now
	}
	p.deferUntil = now.Add(backoff.JitteredFrom(p.rand, p.deferrals, p.backoffMin, p.backoffMax))
}

// dialing records that a dial starts (the budget, if asked, granted it).
func (p *linkPolicy) dialing() { p.deferrals, p.deferUntil = 0, time.Time{} }

// wanted records that a connection is wanted at now: the give-up clock
// runs from the first such moment until a connection is established.
func (p *linkPolicy) wanted(now time.Time) {
	if p.downSince.IsZero() {
		p.downSince = now
	}
}

// connected records a connection established at now: the peer is
// reachable.
func (p *linkPolicy) connected(now time.Time) {
	p.failures, p.deferrals = 0, 0
	p.upSince = now
	p.downSince, p.retryAt, p.deferUntil = time.Time{}, time.Time{}, time.Time{}
}

// lost records the loss of the connection at now: the give-up time counts
// from now, and the next dial is immediate unless this loss is the second
// or a later flap in a row.
func (p *linkPolicy) lost(now time.Time) {
	if p.downSince.IsZero() {
		p.downSince = now
	}
	if p.upSince.IsZero() || now.Sub(p.upSince) >= p.backoffMax {
		p.flaps = 0
		return
	}
	p.flaps++
	if p.flaps > 1 {
		p.retryAt = now.Add(backoff.JitteredFrom(p.rand, p.flaps-1, p.backoffMin, p.backoffMax))
	}
}

// failing reports whether the last dial failed (no connection since).
func (p *linkPolicy) failing() bool { return p.failures > 0 }

// heartbeatPolicy decides whether an idle connection sends a ping: at each
// heartbeat tick, one is due when nothing was written since the previous
// tick (a busy connection's frames keep the peer's read deadline alive).
type heartbeatPolicy struct{ wrote bool }

// written records a frame written.
func (h *heartbeatPolicy) written() { h.wrote = true }

// tick reports whether a ping is due now, and starts the next interval.
func (h *heartbeatPolicy) tick() bool {
	ping := !h.wrote
	h.wrote = false
	return ping
}
