package cluster_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// reachLog records, per member address, the vote's suspensions (true)
// and lifts (false) of the member at about, in order.
type reachLog struct {
	ch   chan [2]any
	seen map[string][]bool // taken from ch, not yet awaited
}

// reachEvents starts a reachLog of nodes about the member at about.
func reachEvents(about string, nodes ...node) *reachLog {
	l := &reachLog{ch: make(chan [2]any, 64), seen: map[string][]bool{}}
	for _, n := range nodes {
		on := n.sys.Address()
		actor.Subscribe(n.sys.EventStream(), func(ev *cluster.MemberUnreachable) {
			if ev.Address == about {
				l.ch <- [2]any{on, true}
			}
		})
		actor.Subscribe(n.sys.EventStream(), func(ev *cluster.MemberReachable) {
			if ev.Address == about {
				l.ch <- [2]any{on, false}
			}
		})
	}
	return l
}

// awaitReach waits for the vote on member on to suspend (true) or lift
// (false) the member the log is about, taking that member's events in
// order and keeping the other members' for their own wait.
func awaitReach(t *testing.T, l *reachLog, on string, suspended bool) {
	t.Helper()
	deadline := time.After(wait)
	for {
		for len(l.seen[on]) > 0 {
			got := l.seen[on][0]
			l.seen[on] = l.seen[on][1:]
			if got == suspended {
				return
			}
		}
		select {
		case e := <-l.ch:
			k := e[0].(string)
			l.seen[k] = append(l.seen[k], e[1].(bool))
		case <-deadline:
			t.Fatalf("the vote on %s never made it suspended=%v", on, suspended)
		}
	}
}

// review13 (F5, rewritten for suspensions): the vote's state of an
// address whose member left the view for good ends: a suspension kept by
// address outlived the member, and under v1 its address cycled between
// block and probation for ever, each departed member adding one. Under
// v2 the address is forgotten once no member of the view has been there
// for 10 After (2 s here).
func TestReview13DepartedMemberLeavesNoVoteBlockBehind(t *testing.T) {
	reg := fastRegistry(t)
	tune := reachTiming()
	a := startMemberWith(t, reg, tune, counterKind())
	b := startMemberWith(t, reg, tune, counterKind())
	addr := freeAddress(t)
	events := reachEvents(addr, a)
	x := startStrangerAt(t, reg, tune, addr, "elsewhere")
	awaitMembers(t, 3, a, b)
	awaitReach(t, events, a.sys.Address(), true)

	require.NoError(t, x.sys.Shutdown(ctxWait(t)))
	awaitMembers(t, 2, a, b)
	require.Eventually(t, func() bool { return !cluster.Review13Suspended(a.c, addr) },
		wait, 10*time.Millisecond, "the departed member's address stays suspended")
}
