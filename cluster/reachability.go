package cluster

import (
	"slices"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster/internal/clusterpb"
)

// The reachability vote (Config.Reachability). Membership and
// connectivity are separate: the provider lists a member whose peers
// cannot connect to it (a certificate they refuse, a firewall, another
// SystemName), and without the vote that member kept its share of the
// identities, every request to them failing, until it left or an
// operator blocked it. With the vote, each member reports in its view
// acknowledgements (ViewAck.Unreachable, every tick) the members whose
// link from it has been down for After, and every member runs the same
// count: a member that more than half of the view reports unreachable is
// suspended here. Suspended, it is out of owner selection as a blocked
// member is (exclude: its identities move behind the barrier, no view
// acknowledgement goes to it), and each of its incarnations that the vote
// finds unreachable is evicted from the provider, so that it fences
// itself and the others wait out W, not its lease, before they activate
// what it owned (rule 3). Remote is not told: its link stays open to
// dials, a ReachProbe every tick makes remote dial it, and the suspension
// is lifted once this member's own link to it is up, the vote no longer
// holds, and the member has been in the view long enough to be judged
// (After and three ticks). At an address with several incarnations in the
// view, the latest is the one judged. The block machinery is the safe part already; this adds
// only who decides, and when it ends.
//
// Why a majority of the whole view, reports counted only when received:
// a member that reaches nobody (its own link down, or every certificate
// of the cluster expired) has only its own vote, never a majority, so it
// suspends nobody and nobody suspends it; a split into two equal halves,
// and the two members of a two-member cluster, never reach a majority
// either; the larger side of an uneven split suspends the smaller, which
// the provider still lists (as Akka's keep-majority does).
//
// Why a link's down time counts only from the member's own arrival in
// the view (reachState.seen): a member restarted at the address of one
// the others could not reach is another member; the failures to reach the
// old one say nothing of it (TestReview13RestartedMemberAtSameAddressIsNotVotedOut).
//
// Why no end by timer: the suspended member's link stays observable (it
// is not refused, only probed), so the vote itself says when it is
// reachable again; a timed end made a member that was still unreachable an
// owner again for a while at every period, its share handed back to it and
// failing until the next vote. A member that left the view stays
// suspended for a while (forgetSuspendedAfter) so that its next
// incarnation, rejoining at once after its eviction, is not an owner
// before the vote has judged it, then is forgotten.

// reachReport is the last report of a member: the keys it found
// unreachable and when the report came.
type reachReport struct {
	keys []string
	at   time.Time
}

// reachState is the placement actor's reachability state.
type reachState struct {
	reports map[string]reachReport // by reporter key; members of the view only
	seen    map[string]time.Time   // member key -> when it first came in a view here
}

// suspension is an address the vote keeps out of owner selection.
type suspension struct {
	evicted string    // the key of the last incarnation there evicted
	gone    time.Time // when no member of the view was at the address any more (zero: one is)
}

// reportFresh is how many ticks a report counts for: a member reports
// every tick, so a report older than that is from a member whose reports
// stopped coming (or that stopped acknowledging during a handover).
const reportFresh = 3

// forgetSuspendedAfter is how many After a suspended address may stay
// without a member in the view before it is forgotten.
const forgetSuspendedAfter = 10

// votedUnreachable returns the members of members that more than half of
// members report unreachable: this member (self) by mine, the others by
// their reports received at or after fresh. Members for which excluded is
// true (blocked by hand) are neither judged nor counted as voters, and the
// reports of members for which silent is true (suspended) are not counted.
// It returns the votes of every member judged, by key.
func votedUnreachable(members []Member, self string, mine []string, reports map[string]reachReport, fresh time.Time, excluded, silent func(key string) bool) (out []Member, votes map[string]int) {
	n := len(members)
	votes = map[string]int{}
	for _, x := range members {
		xk := x.Key()
		if xk == self || excluded(xk) {
			continue
		}
		v := 0
		if slices.Contains(mine, xk) {
			v++
		}
		for _, r := range members {
			rk := r.Key()
			if rk == self || rk == xk || excluded(rk) || silent(rk) {
				continue
			}
			if rep, ok := reports[rk]; ok && !rep.at.Before(fresh) && slices.Contains(rep.keys, xk) {
				v++
			}
		}
		votes[xk] = v
		if 2*v > n {
			out = append(out, x)
		}
	}
	return out, votes
}

// reachOn reports whether the vote is on.
func (p *placementActor) reachOn() bool { return p.c.cfg.Reachability.After > 0 }

// recordReport keeps the report a ViewAck carries.
func (p *placementActor) recordReport(from string, keys []string, now time.Time) {
	if !p.reachOn() || !p.core.hasView || !slices.ContainsFunc(p.core.view.Members, func(m Member) bool { return m.Key() == from }) {
		// Only the view's members vote: a report from anyone else (a
		// member that left, or a forged key) would be kept until the next
		// view for nothing.
		return
	}
	if p.reach.reports == nil {
		p.reach.reports = map[string]reachReport{}
	}
	// Only keys of the view count: a report is kept no longer than the
	// view's size, whatever the sender put in it.
	keys = slices.DeleteFunc(slices.Clone(keys), func(k string) bool {
		return !slices.ContainsFunc(p.core.view.Members, func(m Member) bool { return m.Key() == k })
	})
	slices.Sort(keys)
	keys = slices.Compact(keys) // once each (TestReview14HostileReportIsBoundedByTheView)
	p.reach.reports[from] = reachReport{keys: keys, at: now}
}

// reachView keeps the vote's state to the members of a view installed at
// now: when each was first seen, and the reports of those still there.
func (p *placementActor) reachView(members []Member, now time.Time) {
	if !p.reachOn() {
		return
	}
	in := func(k string) bool { return slices.ContainsFunc(members, func(m Member) bool { return m.Key() == k }) }
	for k := range p.reach.reports {
		if !in(k) {
			delete(p.reach.reports, k)
		}
	}
	for k := range p.reach.seen {
		if !in(k) {
			delete(p.reach.seen, k)
		}
	}
	if p.reach.seen == nil {
		p.reach.seen = map[string]time.Time{}
	}
	for _, m := range members {
		if _, ok := p.reach.seen[m.Key()]; !ok {
			p.reach.seen[m.Key()] = now
		}
	}
}

// myReport is the report this member's next acknowledgement carries: the
// members of the view, other than itself, whose link from here has been
// down for After, counted from when each came in the view.
func (p *placementActor) myReport(now time.Time) []string {
	if !p.reachOn() || !p.core.hasView {
		return nil
	}
	after := p.c.cfg.Reachability.After
	var keys []string
	for _, m := range p.core.view.Members {
		k := m.Key()
		if k == p.core.selfKey {
			continue
		}
		d, down := p.c.links.downFor(m.Address, now, p.reach.seen[k])
		if down && d >= after {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// vote runs the count at every tick: it suspends the members the vote
// finds unreachable (and evicts each such incarnation once), lifts the
// suspension of those it no longer does whose link from here has come up,
// probes the suspended ones, and forgets the suspended addresses that
// have long had no member in the view.
func (p *placementActor) vote(ctx actor.Context, now time.Time) {
	if !p.reachOn() || !p.core.hasView || p.core.fenced || p.leaving {
		return
	}
	fresh := now.Add(-reportFresh * p.c.cfg.TickInterval)
	bl := p.c.remote.BlockList()
	members := p.core.view.Members
	byKey := func(key string) (Member, bool) {
		i := slices.IndexFunc(members, func(m Member) bool { return m.Key() == key })
		if i < 0 {
			return Member{}, false
		}
		return members[i], true
	}
	excluded := func(key string) bool {
		m, ok := byKey(key)
		return ok && bl.IsBlocked(m.ID, m.Address)
	}
	silent := func(key string) bool {
		m, ok := byKey(key)
		return ok && p.c.isSuspended(m.Address)
	}
	out, votes := votedUnreachable(members, p.core.selfKey, p.myReport(now), p.reach.reports, fresh, excluded, silent)
	for _, m := range out {
		if p.c.suspend(m, now) {
			p.c.log.Warn("cluster: member unreachable by most of the cluster; suspended",
				"member", m.Key(), "votes", votes[m.Key()], "members", len(members))
			p.c.sys.EventStream().Publish(&MemberUnreachable{Member: m.Key(), Address: m.Address,
				Votes: votes[m.Key()], Members: len(members), At: now})
		}
	}
	forget := time.Duration(forgetSuspendedAfter) * p.c.cfg.Reachability.After
	// A member is lifted only once it has been in the view long enough for
	// its reports to come: before, its count is 0 whether it is reachable
	// or not (TestReview14NewIncarnationIsNotLiftedBeforeTheVoteJudgedIt).
	judgedAfter := p.c.cfg.Reachability.After + reportFresh*p.c.cfg.TickInterval
	for addr := range p.c.suspensions() {
		// The latest incarnation at the address is the one judged: an
		// earlier one still listed (a crash's registration not yet
		// expired) is not the member to let back in
		// (TestReview14LiftReadmitsTheLiveIncarnationAtTheAddress).
		i := -1
		for j, m := range members {
			if m.Address == addr && (i < 0 || m.Incarnation > members[i].Incarnation) {
				i = j
			}
		}
		if i < 0 {
			if p.c.suspendedGone(addr, now, forget) {
				p.c.log.Info("cluster: suspended address without a member for long; forgotten", "address", addr)
			}
			continue
		}
		m := members[i]
		seen, known := p.reach.seen[m.Key()]
		old := known && now.Sub(seen) >= judgedAfter
		// This member's own link to it is up now (TestReview14MemberWhoseLinkNeverWentDownLiftsTheSuspension:
		// a link that never went down brings no new connection).
		if v, judged := votes[m.Key()]; old && judged && 2*v <= len(members) && p.c.links.connected(addr) && !bl.IsBlocked(m.ID, m.Address) {
			if p.c.lift(m) {
				p.c.log.Info("cluster: suspended member reachable again; eligible again", "member", m.Key(), "votes", v)
				p.c.sys.EventStream().Publish(&MemberReachable{Member: m.Key(), Address: m.Address, At: now})
			}
			continue
		}
		ctx.Send(actor.NewPID(addr, placementName), &clusterpb.ReachProbe{})
	}
}

// suspend keeps m's address out of owner selection and evicts m (once per
// incarnation). It reports whether the address was not suspended yet.
func (c *Cluster) suspend(m Member, now time.Time) bool {
	c.blockMu.Lock()
	if c.suspended == nil {
		c.suspended = map[string]*suspension{}
	}
	s, had := c.suspended[m.Address]
	if !had {
		s = &suspension{}
		c.suspended[m.Address] = s
	}
	evict := s.evicted != m.Key()
	s.evicted = m.Key()
	s.gone = time.Time{}
	c.blockMu.Unlock()
	if !had || !c.isBlockedMember(m.Key()) {
		c.exclude([]Member{m}, true)
	}
	if evict {
		c.evict(m)
	}
	return !had
}

// lift puts m, at a suspended address, back in owner selection.
func (c *Cluster) lift(m Member) bool {
	c.blockMu.Lock()
	_, ok := c.suspended[m.Address]
	delete(c.suspended, m.Address)
	c.blockMu.Unlock()
	return ok && c.exclude([]Member{m}, false)
}

// suspendedGone notes that no member of the view is at the suspended
// address addr, and forgets it once that has lasted forget; it reports
// whether it forgot it.
func (c *Cluster) suspendedGone(addr string, now time.Time, forget time.Duration) bool {
	c.blockMu.Lock()
	defer c.blockMu.Unlock()
	s, ok := c.suspended[addr]
	if !ok {
		return false
	}
	if s.gone.IsZero() {
		s.gone = now
		return false
	}
	if now.Sub(s.gone) < forget {
		return false
	}
	delete(c.suspended, addr)
	return true
}

// isSuspended reports whether the vote keeps address out.
func (c *Cluster) isSuspended(address string) bool {
	c.blockMu.Lock()
	defer c.blockMu.Unlock()
	_, ok := c.suspended[address]
	return ok
}

// suspensions returns a copy of the suspended addresses.
func (c *Cluster) suspensions() map[string]suspension {
	c.blockMu.Lock()
	defer c.blockMu.Unlock()
	out := make(map[string]suspension, len(c.suspended))
	for a, s := range c.suspended {
		out[a] = *s
	}
	return out
}
