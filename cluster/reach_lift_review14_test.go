package cluster_test

import (
	"crypto/x509"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// review14Gate is a VerifyPeer hook that refuses the peers at the addresses it
// names, on both sides of every handshake: a link that fails for some
// members only (a firewall rule, a certificate some peers refuse).
type review14Gate struct {
	mu     sync.Mutex
	refuse map[string]bool
}

func (g *review14Gate) set(addrs ...string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refuse = map[string]bool{}
	for _, a := range addrs {
		g.refuse[a] = true
	}
}

func (g *review14Gate) verify(p remote.Peer, _ *x509.Certificate) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.refuse[p.Address] {
		return fmt.Errorf("gate: %s refused", p.Address)
	}
	return nil
}

// lifted is a MemberReachable seen on member on.
type lifted struct {
	on string
	at time.Time
}

// startReview14Gated starts a member of the "shop" system whose handshakes pass g.
func startReview14Gated(t *testing.T, reg cluster.Provider, tune func(*cluster.Config), g *review14Gate) node {
	t.Helper()
	return startReview14GatedAt(t, reg, tune, g, "127.0.0.1:0")
}

// startReview14GatedAt is startReview14Gated listening on listen.
func startReview14GatedAt(t *testing.T, reg cluster.Provider, tune func(*cluster.Config), g *review14Gate, listen string) node {
	t.Helper()
	return startMemberFull(t, reg, func(*cluster.Config) {}, func(c *actor.SystemConfig) {
		ccfg := cluster.Config{Name: "shop", Provider: reg, Kinds: []cluster.Kind{counterKind()}}
		tune(&ccfg)
		rcfg := remote.DefaultConfig()
		rcfg.ListenAddress = listen
		rcfg.SystemName = "shop"
		rcfg.Serializers = serializers(t)
		rcfg.ReconnectBackoffMin = 5 * time.Millisecond
		rcfg.ReconnectBackoffMax = 50 * time.Millisecond
		rcfg.VerifyPeer = g.verify
		c.Extensions = []actor.ExtensionInstaller{remote.Install(rcfg), cluster.Install(ccfg)}
	})
}

// Five members; x refuses a, b and c but not d. The vote of a, b and c (3
// of 5) suspends x on all four, d included, though d's link to x is up.
// When x lets a, b and c in again their links come up and they lift x;
// d's link never went down, so it has no "connected" event after the
// suspension, and the suspension's up flag (set only by such an event)
// stays false on d: d keeps x out of owner selection for ever, while
// the others route x's share to it; d acknowledges no view to x, so x's
// barrier (it joined a view with d in it) never clears for d either.
func TestReview14MemberWhoseLinkNeverWentDownLiftsTheSuspension(t *testing.T) {
	reg := fastRegistry(t)
	tune := reachTiming()
	a := startMemberWith(t, reg, tune, counterKind())
	b := startMemberWith(t, reg, tune, counterKind())
	c := startMemberWith(t, reg, tune, counterKind())
	d := startMemberWith(t, reg, tune, counterKind())
	nodes := []node{a, b, c, d}
	unreachable := make(chan string, 64)
	reachable := make(chan lifted, 64)
	for _, n := range nodes {
		on := n.sys.Address()
		actor.Subscribe(n.sys.EventStream(), func(*cluster.MemberUnreachable) { unreachable <- on })
		actor.Subscribe(n.sys.EventStream(), func(ev *cluster.MemberReachable) { reachable <- lifted{on, ev.At} })
	}
	g := &review14Gate{}
	g.set(a.sys.Address(), b.sys.Address(), c.sys.Address())
	x := startReview14Gated(t, reg, tune, g)
	awaitMembers(t, 5, a, b, c, d)

	got := map[string]bool{}
	deadline := time.After(wait)
	for len(got) < 4 {
		select {
		case on := <-unreachable:
			got[on] = true
		case <-deadline:
			t.Fatalf("x suspended only on %v", got)
		}
	}
	require.True(t, cluster.Review14Suspended(d.c, x.sys.Address()), "d counts the reports of a, b and c")

	healed := time.Now()
	g.set() // x reachable by every member again
	done := map[string]bool{}
	deadline = time.After(wait)
	for len(done) < 4 {
		select {
		case ev := <-reachable:
			if !ev.at.Before(healed) { // a lift before the heal does not count
				done[ev.on] = true
			}
		case <-deadline:
			t.Fatalf("x reachable by all, yet lifted only on %v (d is %s); suspended on d: %v",
				done, d.sys.Address(), cluster.Review14Suspended(d.c, x.sys.Address()))
		}
	}
	// Every identity can be activated again, x's share included (on
	// reach, x's share stays "handover barrier: waiting for" d).
	ctx := ctxWait(t)
	for i := range 60 {
		id := cluster.NewIdentity("counter", fmt.Sprint("s", i))
		_, err := cluster.Request[*Identity](ctx, a.c, id, &WhoAmI{})
		require.NoError(t, err, "%s from a", id)
	}
}

// Five members; x refuses the other four, which suspend it (4 of 5),
// and each incarnation it rejoins as is voted out in turn. Then x lets a
// in: a's link comes up while b, c and d still cannot reach x and keep
// voting each incarnation out. The design (reachability.go) keeps a
// suspended address's next incarnation out until the vote has judged
// it, but the count for an incarnation that just came in is 0 (nobody's
// link to it has been down for After yet), which lift takes as the vote
// no longer holding: a makes every new incarnation an owner at once,
// handing x's share back to it (x cannot activate it: b, c and d send it
// no acknowledgement), and suspends it again After later.
func TestReview14NewIncarnationIsNotLiftedBeforeTheVoteJudgedIt(t *testing.T) {
	reg := fastRegistry(t)
	tune := reachTiming()
	a := startMemberWith(t, reg, tune, counterKind())
	b := startMemberWith(t, reg, tune, counterKind())
	c := startMemberWith(t, reg, tune, counterKind())
	d := startMemberWith(t, reg, tune, counterKind())
	nodes := []node{a, b, c, d}
	unreachable := make(chan string, 64)
	for _, n := range nodes {
		on := n.sys.Address()
		actor.Subscribe(n.sys.EventStream(), func(*cluster.MemberUnreachable) { unreachable <- on })
	}
	g := &review14Gate{}
	g.set(a.sys.Address(), b.sys.Address(), c.sys.Address(), d.sys.Address())
	x := startReview14Gated(t, reg, tune, g)
	awaitMembers(t, 5, a, b, c, d)
	got := map[string]bool{}
	deadline := time.After(wait)
	for len(got) < 4 {
		select {
		case on := <-unreachable:
			got[on] = true
		case <-deadline:
			t.Fatalf("x suspended only on %v", got)
		}
	}

	connected := make(chan struct{}, 1)
	actor.Subscribe(a.sys.EventStream(), func(ev *remote.Event) {
		if ev.Kind == remote.EventConnected && ev.Peer.Address == x.sys.Address() {
			select {
			case connected <- struct{}{}:
			default:
			}
		}
	})
	events := make(chan string, 64)
	actor.Subscribe(a.sys.EventStream(), func(ev *cluster.TopologyChanged) {
		for _, m := range ev.Left {
			if m.Address == x.sys.Address() {
				events <- "left " + m.Key()
			}
		}
	})
	actor.Subscribe(a.sys.EventStream(), func(ev *cluster.MemberReachable) { events <- "lifted " + ev.Member })
	actor.Subscribe(a.sys.EventStream(), func(ev *cluster.MemberUnreachable) { events <- "suspended " + ev.Member })
	g.set(b.sys.Address(), c.sys.Address(), d.sys.Address())
	select {
	case <-connected:
	case <-time.After(wait):
		t.Fatal("a's link to x never came up")
	}
	// Three incarnations of x voted out by b, c and d (a counts their
	// reports too): a keeps x out all along.
	var seen []string
	for leaves := 0; leaves < 3; {
		select {
		case ev := <-events:
			seen = append(seen, ev)
			if strings.HasPrefix(ev, "left ") {
				leaves++
			}
		case <-time.After(wait):
			t.Fatalf("x's incarnations stopped being voted out: %v", seen)
		}
	}
	for _, ev := range seen {
		require.False(t, strings.HasPrefix(ev, "lifted "),
			"a made x an owner while b, c and d still voted each incarnation out: %v", seen)
	}
	require.True(t, cluster.Review14Suspended(a.c, x.sys.Address()))
}
