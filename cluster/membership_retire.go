package cluster

import (
	"context"
	"fmt"
)

// Retirer is an optional interface of a Membership, detected with a type
// assertion: Retire ends this incarnation the way Leave does as far as the
// backend is concerned (the released marker of the incarnation is
// published, and its registration, when the backend still holds it, is
// removed, so the other members drop it from their views at once and take
// over what it owned without the wait-out W), but it may be called again
// after it failed and after the membership ended. Unlike Leave, a Retire
// that cannot reach the backend leaves the membership retirable: the
// caller retries until it returns nil (then later calls return nil at
// once). A membership that has not ended is ended first, as Stop ends it.
//
// The cluster runtime calls it for an incarnation that fenced itself once
// every one of its grains has terminated (after Stop, from a goroutine of
// its own, retrying with the retry policy's backoff until it succeeds or
// the cluster shuts down), so that the views stop naming an incarnation
// that holds nothing: after a registry outage longer than the fence
// period, every member fences and rejoins at once, and without it the old
// incarnations stayed in every view, owning their share of the
// identities, until the backend expired them. Call it only when nothing
// that this incarnation protected still runs: the marker tells the other
// members exactly that. ctx bounds one attempt. The in-memory registry's
// and the Consul provider's memberships implement it.
type Retirer interface {
	Retire(ctx context.Context) error
}

// retireFenced publishes the released marker of m, an incarnation of this
// member that fenced itself and whose grains have all terminated, and
// removes its registration (Retirer), retrying with the retry policy's
// backoff while the provider cannot be reached, until it succeeds or
// Shutdown begins (then the backend drops m when its lease expires, and
// the others wait W for it, as before). It runs on a tracked goroutine.
//
// Why releasing it is safe. A released marker lets every other member
// take over what m owned at once (rule 3 of the placement core): it must
// hold nothing and grant nothing more. It holds nothing: the placement
// actor calls this only once its lease table is empty, every activation
// granted under m having terminated (its Terminated handled), the
// condition under which a graceful Shutdown writes its marker too; a fence
// whose grains do not all stop (a Receive that never returns) never gets
// here, and the others wait m's lease out, then W. It grants nothing more:
// a fenced placement core refuses every activation (rule 1) until the
// rejoin replaces it with the next incarnation's, which grants only under
// its own key and views. A member whose remote node ended does not retire
// (see endFencedMembership).
func (c *Cluster) retireFenced(m Membership) {
	r, ok := m.(Retirer)
	if !ok {
		return
	}
	key := m.Self().Key()
	for attempt := 1; ; attempt++ {
		if c.remoteGone.Load() {
			// The remote node ended while the release was pending: that
			// models a crash, which writes no marker (endFencedMembership),
			// whenever it comes (TestClusterRemoteEndedDuringPendingReleaseDoesNotReleaseReview10).
			c.retired(m)
			c.log.Info("cluster: fenced incarnation not released: the remote node ended; left to expire", "member", key)
			return
		}
		ctx, cancel := context.WithTimeout(c.ctx, c.cfg.RequestTimeout)
		panicked, err := callRetire(ctx, r)
		cancel()
		if panicked {
			// A provider's bug: retrying would repeat it. The backend
			// drops m when its lease expires.
			c.retired(m)
			c.log.Error("cluster: releasing the fenced incarnation panicked; left to expire", "member", key, "err", err)
			return
		}
		if err == nil {
			c.retired(m)
			c.log.Info("cluster: fenced incarnation released", "member", key, "attempts", attempt)
			return
		}
		if c.ctx.Err() != nil {
			return
		}
		if attempt == 1 {
			c.log.Warn("cluster: releasing the fenced incarnation failed; retrying", "member", key, "err", err)
		} else {
			c.log.Debug("cluster: releasing the fenced incarnation failed", "member", key, "attempt", attempt, "err", err)
		}
		if !c.wait(c.cfg.Retry.Delay(min(attempt, 16), c.rnd.Float64())) {
			return
		}
	}
}

// callRetire calls r.Retire, a provider's code: a panic is returned as an
// error, with panicked set.
func callRetire(ctx context.Context, r Retirer) (panicked bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			panicked, err = true, fmt.Errorf("cluster: membership Retire panicked: %v", p)
		}
	}()
	return false, r.Retire(ctx)
}

// beginRetire records that m, a fenced incarnation whose grains have all
// terminated, is to be released, and reports whether its provider can
// (Retirer). The placement actor calls it before it starts retireFenced,
// so a Shutdown that follows finds m in retiring (retirePending).
func (c *Cluster) beginRetire(m Membership) bool {
	if _, ok := m.(Retirer); !ok {
		return false
	}
	c.goMu.Lock()
	defer c.goMu.Unlock()
	if c.retiring == nil {
		c.retiring = map[Membership]struct{}{}
	}
	c.retiring[m] = struct{}{}
	return true
}

// retired forgets m's pending release.
func (c *Cluster) retired(m Membership) {
	c.goMu.Lock()
	delete(c.retiring, m)
	c.goMu.Unlock()
}

// retirePending makes one last attempt, within Shutdown's ctx, to release
// the fenced incarnations whose release had not succeeded when Shutdown
// began (their goroutines end with Shutdown): a member told to shut down
// while fenced, its registry just back, leaves no incarnation for the
// others to wait out. Shutdown calls it once every grain has stopped, so
// no placement actor turn adds to retiring any more (a leaving placement
// actor ends no fenced membership). What still fails is logged and left to
// expire, as a crash's incarnation is.
func (c *Cluster) retirePending(ctx context.Context) {
	c.goMu.Lock()
	pending := make([]Membership, 0, len(c.retiring))
	for m := range c.retiring {
		pending = append(pending, m)
	}
	c.goMu.Unlock()
	if c.remoteGone.Load() { // a crash writes no marker (retireFenced)
		return
	}
	for _, m := range pending {
		rctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
		panicked, err := callRetire(rctx, m.(Retirer))
		cancel()
		if err != nil || panicked {
			c.log.Warn("cluster: fenced incarnation not released at shutdown; the others wait it out", "member", m.Self().Key(), "err", err)
			continue
		}
		c.retired(m)
		c.log.Info("cluster: fenced incarnation released at shutdown", "member", m.Self().Key())
	}
}
