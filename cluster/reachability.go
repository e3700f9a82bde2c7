package cluster

import (
	"maps"
	"slices"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster/internal/clusterpb"
	"github.com/fraktor-go/fraktor/remote"
)

// The reachability vote (Config.Reachability). Membership and
// connectivity are separate: the provider lists a member whose peers
// cannot connect to it (a certificate they refuse, a firewall, another
// SystemName), and without the vote that member kept its share of the
// identities, every request to them ending in a timeout, until it left or
// an operator blocked it. With the vote, each member reports in its view
// acknowledgements (ViewAck.Unreachable, every tick) the members whose
// link from it has been down for After, and a member that more than half
// of the view reports unreachable is blocked as by hand (onBlockEvent):
// evicted from the provider, its identities handed over behind the
// barrier, the other members told. The block is the safe part already:
// this adds only who decides, and when it ends.
//
// Why a majority of the whole view, reports counted only when received:
// a member that reaches nobody (its own link down, or every certificate
// of the cluster expired) has only its own vote, never a majority, so it
// blocks nobody and nobody is blocked; a split into two equal halves, and
// the two members of a two-member cluster, never reach a majority either;
// the larger side of an uneven split blocks the smaller, which the
// provider still lists (as Akka's keep-majority does).

// reachReport is the last report of a member: the keys it found
// unreachable and when the report came.
type reachReport struct {
	keys []string
	at   time.Time
}

// reachState is the placement actor's reachability state.
type reachState struct {
	reports map[string]reachReport // by reporter key; members of the view only
	blocks  map[string]voteBlock   // address -> a vote's block applied here
}

// voteBlock is a block the vote made (here or on the member that told
// this one): it ends at end, and lasts d when it is made again.
type voteBlock struct {
	end time.Time
	d   time.Duration
}

// probation is an address whose vote's block ended: remote lets its
// connections through, owner selection still leaves it out until its
// link comes up; at until it is blocked again for d.
type probation struct {
	until time.Time
	d     time.Duration
}

// reportFresh is how many ticks a report counts for: a member reports
// every tick, so a report older than that is from a member whose reports
// stopped coming (or that stopped acknowledging during a handover).
const reportFresh = 3

// unreachableHere returns the keys of the members of view, other than
// self, whose link from this member has been down for at least after.
func (c *Cluster) unreachableHere(members []Member, self string, after time.Duration, now time.Time) []string {
	var keys []string
	for _, m := range members {
		if m.Key() == self {
			continue
		}
		if d, down := c.links.downFor(m.Address, now); down && d >= after {
			keys = append(keys, m.Key())
		}
	}
	slices.Sort(keys)
	return keys
}

// votedUnreachable returns the members of members that more than half of
// members report unreachable: this member (self) by mine, the others by
// their reports received at or after fresh. Members for which excluded is
// true (blocked here already) are neither judged nor counted as voters.
// It returns each with its votes.
func votedUnreachable(members []Member, self string, mine []string, reports map[string]reachReport, fresh time.Time, excluded func(key string) bool) (out []Member, votes []int) {
	n := len(members)
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
			if rk == self || rk == xk || excluded(rk) {
				continue
			}
			if rep, ok := reports[rk]; ok && !rep.at.Before(fresh) && slices.Contains(rep.keys, xk) {
				v++
			}
		}
		if 2*v > n {
			out = append(out, x)
			votes = append(votes, v)
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
	p.reach.reports[from] = reachReport{keys: keys, at: now}
}

// pruneReports drops the reports of members that are not in the view.
func (p *placementActor) pruneReports(members []Member) {
	for k := range p.reach.reports {
		if !slices.ContainsFunc(members, func(m Member) bool { return m.Key() == k }) {
			delete(p.reach.reports, k)
		}
	}
}

// myReport is the report this member's next acknowledgement carries.
func (p *placementActor) myReport(now time.Time) []string {
	if !p.reachOn() || !p.core.hasView {
		return nil
	}
	return p.c.unreachableHere(p.core.view.Members, p.core.selfKey, p.c.cfg.Reachability.After, now)
}

// vote blocks the members of the view that the vote finds unreachable
// (mine: this member's own report).
func (p *placementActor) vote(mine []string, now time.Time) {
	if !p.reachOn() || !p.core.hasView || p.core.fenced || p.leaving {
		return
	}
	fresh := now.Add(-reportFresh * p.c.cfg.TickInterval)
	bl := p.c.remote.BlockList()
	members := p.core.view.Members
	excluded := func(key string) bool {
		if _, ok := p.core.blocked[key]; ok {
			return true
		}
		for _, m := range members {
			if m.Key() == key {
				return bl.IsBlocked(m.ID, m.Address)
			}
		}
		return false
	}
	out, votes := votedUnreachable(members, p.core.selfKey, mine, p.reach.reports, fresh, excluded)
	for i, m := range out {
		d := p.c.cfg.Reachability.BlockFor
		p.c.log.Warn("cluster: member unreachable by most of the cluster; blocking it",
			"member", m.Key(), "votes", votes[i], "members", len(members), "for", d)
		p.c.sys.EventStream().Publish(&MemberUnreachable{Member: m.Key(), Address: m.Address,
			Votes: votes[i], Members: len(members), BlockFor: d, At: now})
		p.scheduleUnblock(m.Address, now, d)
		p.c.voteBlock(m.Address, d)
	}
}

// scheduleUnblock records that the block of address, made at now, ends
// after d here.
func (p *placementActor) scheduleUnblock(address string, now time.Time, d time.Duration) {
	if p.reach.blocks == nil {
		p.reach.blocks = map[string]voteBlock{}
	}
	p.reach.blocks[address] = voteBlock{end: now.Add(d), d: d}
}

// probationFor is how long a member whose block ended has to bring its
// link up: the vote's After (at least 4 ticks, so that a member with the
// vote off, told of the block, gives the dial time too).
func (p *placementActor) probationFor() time.Duration {
	return max(p.c.cfg.Reachability.After, 4*p.c.cfg.TickInterval)
}

// tickVoteBlocks ends the vote's blocks that are due, and runs the
// probations: it probes each address on probation (a ReachProbe to its
// placement actor makes remote connect) and blocks again, for as long as
// before, an address whose link did not come up in time.
//
// Why a probation rather than a plain unblock: a blocked member's link
// cannot come up (remote refuses it), so at the end of the block nothing
// says whether it is reachable again. Unblocked outright, it was an owner
// again at once: the identities that had moved away were handed back to
// it (stopped here) and failed again until the vote blocked it anew, a
// gap of After and more at every BlockFor
// (TestReachabilityProbationHandsNothingBack). On probation, remote lets
// the link up while owner selection still leaves the member out; only a
// link that comes up (probationPassed) makes it an owner again.
func (p *placementActor) tickVoteBlocks(ctx actor.Context, now time.Time) {
	for addr, b := range p.reach.blocks {
		if now.Before(b.end) {
			continue
		}
		delete(p.reach.blocks, addr)
		p.c.links.restart(addr)
		p.c.startProbation(addr, now.Add(p.probationFor()), b.d)
		p.c.log.Info("cluster: the reachability vote's block ended; on probation until the link comes up", "address", addr)
		p.c.remote.BlockList().Unblock(addr)
	}
	for addr, pr := range p.c.probations() {
		if now.Before(pr.until) {
			ctx.Send(actor.NewPID(addr, placementName), &clusterpb.ReachProbe{})
			continue
		}
		if !p.c.endProbation(addr) {
			continue // passed meanwhile
		}
		p.c.log.Warn("cluster: member still unreachable after its block; blocking it again", "address", addr, "for", pr.d)
		p.scheduleUnblock(addr, now, pr.d)
		p.c.voteBlock(addr, pr.d)
	}
}

// voteBlock blocks address in remote's BlockList for the vote: the block
// notices onBlockEvent sends say it ends after d.
func (c *Cluster) voteBlock(address string, d time.Duration) {
	c.blockMu.Lock()
	if c.voteBlocks == nil {
		c.voteBlocks = map[string]time.Duration{}
	}
	c.voteBlocks[address] = d
	c.blockMu.Unlock()
	c.remote.BlockList().Block(address)
	c.blockMu.Lock()
	delete(c.voteBlocks, address)
	c.blockMu.Unlock()
}

// voteBlockFor returns how long a block of address that onBlockEvent is
// applying lasts: 0 unless the vote made it.
func (c *Cluster) voteBlockFor(address string) time.Duration {
	c.blockMu.Lock()
	defer c.blockMu.Unlock()
	return c.voteBlocks[address]
}

// onLinkEvent records a link event (linkFailures) and ends the probation
// of an address whose link came up.
func (c *Cluster) onLinkEvent(ev any) {
	c.links.record(ev)
	if e := ev.(*remote.Event); e.Kind == remote.EventConnected && c.endProbation(e.Peer.Address) {
		c.probationPassed(e.Peer.Address)
	}
}

// startProbation puts address on probation until until (tickVoteBlocks).
func (c *Cluster) startProbation(address string, until time.Time, d time.Duration) {
	c.blockMu.Lock()
	defer c.blockMu.Unlock()
	if c.probation == nil {
		c.probation = map[string]probation{}
	}
	c.probation[address] = probation{until: until, d: d}
}

// endProbation takes address off probation and reports whether it was on.
func (c *Cluster) endProbation(address string) bool {
	c.blockMu.Lock()
	defer c.blockMu.Unlock()
	_, ok := c.probation[address]
	delete(c.probation, address)
	return ok
}

// onProbation reports whether address is on probation.
func (c *Cluster) onProbation(address string) bool {
	c.blockMu.Lock()
	defer c.blockMu.Unlock()
	_, ok := c.probation[address]
	return ok
}

// probations returns a copy of the addresses on probation.
func (c *Cluster) probations() map[string]probation {
	c.blockMu.Lock()
	defer c.blockMu.Unlock()
	return maps.Clone(c.probation)
}

// probationPassed makes the members at address, whose link came up on
// probation, eligible again: what an unblock does (onBlockEvent), now
// that remote's unblock has long been applied.
func (c *Cluster) probationPassed(address string) {
	c.log.Info("cluster: member on probation reachable again; eligible again", "address", address)
	c.onBlockEvent(remote.BlockEvent{Blocked: false, Keys: []string{address}})
}
