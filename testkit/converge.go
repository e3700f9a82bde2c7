package testkit

import (
	"context"
	"fmt"
	"strings"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// AwaitConverged waits until every running member is ready and sees the
// same view, which holds exactly the running members, and that view has
// settled on each (cluster.Cluster.Settled: every member acknowledged it,
// and a member that joined was vouched for), or ctx ends. So a call made
// next is not refused for want of an acknowledgement, which matters with
// VirtualTime, where nothing moves the clock for its retry while a test
// blocks in it. With
// VirtualTime it moves the clock itself while it waits, as Eventually
// does, for at most DefaultVirtualBudget of virtual time (and until ctx
// ends in wall time): the clock then stands at most one step past the
// moment the cluster converged. The error on timeout names the first
// disagreement and then reports every running member's status and view,
// and the registry's (convergeReport).
func (tc *TestCluster) AwaitConverged(ctx context.Context) error {
	if tc.manual != nil {
		if err := tc.advanceUntil(ctx, tc.converged, DefaultVirtualBudget); err != nil {
			return fmt.Errorf("testkit: cluster not converged: %w\n%s", err, tc.convergeReport())
		}
		return nil
	}
	wake := make(chan struct{}, 1)
	notify := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	var subs []func()
	for _, i := range tc.Up() {
		es := tc.System(i).EventStream()
		s1 := actor.Subscribe(es, func(*cluster.TopologyChanged) { notify() })
		s2 := actor.Subscribe(es, func(*cluster.ClusterStatusChanged) { notify() })
		s3 := actor.Subscribe(es, func(*cluster.ViewSettled) { notify() })
		subs = append(subs, func() { es.Unsubscribe(s1); es.Unsubscribe(s2); es.Unsubscribe(s3) })
	}
	defer func() {
		for _, u := range subs {
			u()
		}
	}()
	for {
		why := tc.converged()
		if why == "" {
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return fmt.Errorf("testkit: cluster not converged: %s: %w\n%s", why, ctx.Err(), tc.convergeReport())
		}
	}
}

// converged returns "" when the running members agree, and why not
// otherwise.
func (tc *TestCluster) converged() string {
	up := tc.Up()
	want := map[string]bool{}
	for _, i := range up {
		want[tc.Node(i).Self().Key()] = true
	}
	var hash uint64
	for k, i := range up {
		c := tc.Node(i)
		if s := c.Status(); s != cluster.StatusReady {
			return fmt.Sprintf("member %d is %v", i, s)
		}
		topo, ok := c.Topology()
		if !ok {
			return fmt.Sprintf("member %d has no view", i)
		}
		if k == 0 {
			hash = topo.Hash
		} else if topo.Hash != hash {
			return fmt.Sprintf("member %d sees another view (%d members)", i, len(topo.Members))
		}
		if len(topo.Members) != len(want) {
			return fmt.Sprintf("member %d sees %d members, %d run", i, len(topo.Members), len(want))
		}
		for _, mm := range topo.Members {
			if !want[mm.Key()] {
				return fmt.Sprintf("member %d sees %s, which does not run", i, mm.Key())
			}
		}
	}
	for _, i := range up {
		if !tc.Node(i).Settled() {
			return fmt.Sprintf("member %d's view has not settled (acknowledgements or a vouch outstanding)", i)
		}
	}
	return ""
}

// convergeReport describes, one line each, what every running member
// sees (status, view epoch and hash, the members of its view that do not
// run and the running members it lacks, each named by slot) and the
// registry's view: enough to tell a stale incarnation left registered from
// a member that is slow to see a change.
func (tc *TestCluster) convergeReport() string {
	tc.mu.Lock()
	slots := make(map[string]int, len(tc.members)) // address → slot
	states := make(map[int]MemberState, len(tc.members))
	for _, m := range tc.members {
		if m != nil {
			slots[m.addr], states[m.slot] = m.slot, m.state
		}
	}
	tc.mu.Unlock()
	up := tc.Up()
	running := map[string]bool{}
	for _, i := range up {
		running[tc.Node(i).Self().Key()] = true
	}
	name := func(mm cluster.Member) string {
		i, ok := slots[mm.Address]
		if !ok {
			return mm.Key() + " (no slot)"
		}
		st := "up"
		switch states[i] {
		case MemberKilled:
			st = "killed"
		case MemberStopped:
			st = "stopped"
		}
		return fmt.Sprintf("%s (slot %d, %s)", mm.Key(), i, st)
	}
	var b strings.Builder
	describeView := func(topo cluster.Topology) {
		fmt.Fprintf(&b, "view epoch %d hash %x, %d members", topo.Epoch, topo.Hash, len(topo.Members))
		var stale []string
		seen := map[string]bool{}
		for _, mm := range topo.Members {
			seen[mm.Key()] = true
			if !running[mm.Key()] {
				stale = append(stale, name(mm))
			}
		}
		var lacks []string
		for _, i := range up {
			if self := tc.Node(i).Self(); !seen[self.Key()] {
				lacks = append(lacks, name(self))
			}
		}
		if len(stale) > 0 {
			fmt.Fprintf(&b, "; not running: %s", strings.Join(stale, ", "))
		}
		if len(lacks) > 0 {
			fmt.Fprintf(&b, "; lacks: %s", strings.Join(lacks, ", "))
		}
	}
	for _, i := range up {
		c := tc.Node(i)
		fmt.Fprintf(&b, "  member %d %s: %v", i, c.Self().Key(), c.Status())
		if c.Status() == cluster.StatusReady && !c.Settled() {
			b.WriteString(", not settled")
		}
		if tc.Paused(i) {
			b.WriteString(", paused")
		}
		if topo, ok := c.Topology(); ok {
			b.WriteString(", ")
			describeView(topo)
		} else {
			b.WriteString(", no view")
		}
		b.WriteByte('\n')
	}
	if tc.reg != nil {
		b.WriteString("  registry: ")
		describeView(tc.reg.Topology())
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}
