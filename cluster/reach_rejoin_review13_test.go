package cluster_test

import (
	"crypto/x509"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// startReview13Member starts a member of system name on listen, with
// tune applied to its cluster config and rtune to its remote config.
func startReview13Member(t *testing.T, reg cluster.Provider, tune func(*cluster.Config), rtune func(*remote.Config), listen, name string) node {
	t.Helper()
	ccfg := cluster.Config{Name: name, Provider: reg, Kinds: []cluster.Kind{counterKind()}}
	tune(&ccfg)
	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress = listen
	rcfg.SystemName = name
	rcfg.Serializers = serializers(t)
	rcfg.ReconnectBackoffMin = 5 * time.Millisecond
	rcfg.ReconnectBackoffMax = 50 * time.Millisecond
	rtune(&rcfg)
	sys := testkit.NewPeerSystem(t, func(c *actor.SystemConfig) {
		c.Name = name
		c.Extensions = []actor.ExtensionInstaller{remote.Install(rcfg), cluster.Install(ccfg)}
	})
	c := cluster.Get(sys)
	require.NotNil(t, c)
	return node{sys: sys, c: c}
}

// freeAddress returns a loopback address nothing listens on.
func freeAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// A member that restarts at its address (a fixed port, a StatefulSet) is
// a new member of the view: whether the others reached the member that
// was there before says nothing of whether they reach this one. The vote
// must count its link as down only from failures of its own time. On
// branch reach, linkFailures keeps an address's first failure ("since")
// until a connection to the address succeeds, also after the member there
// left the view (link_failures.go record/downFor; nothing forgets it but
// a connection or the end of a vote's block): the failed dials to the old
// member count for the new one, so the first acknowledgement after the
// view that adds it reports it, its link "down" since before it started,
// and two reports of three block a member that no dial has failed to
// reach: evicted, refused for BlockFor (a minute by default), then on
// probation. It takes only a handshake slower than a tick or two (TLS on
// a busy host; here held for a second, well below HandshakeTimeout, and
// failing none), or a redial of the old endpoint still waiting out its
// backoff (up to 5 s by default) while the view already lists the member.
func TestReview13RestartedMemberAtSameAddressIsNotVotedOut(t *testing.T) {
	reg := fastRegistry(t)
	tune := reachTiming()
	same := func(*remote.Config) {}
	a := startReview13Member(t, reg, tune, same, "127.0.0.1:0", "shop")
	b := startReview13Member(t, reg, tune, same, "127.0.0.1:0", "shop")
	addr := freeAddress(t)
	x := startReview13Member(t, reg, tune, same, addr, "shop")
	awaitMembers(t, 3, a, b, x)
	require.NoError(t, x.sys.Shutdown(ctxWait(t)))
	awaitMembers(t, 2, a, b)

	// A caller on a and on b still holds a PID on the member that left
	// (a cached grain PID, say): its sends fail to connect.
	for _, n := range []node{a, b} {
		require.Eventually(t, func() bool {
			if _, down := cluster.Review13LinkDownFor(n.c, addr); down {
				return true
			}
			n.sys.Root().Send(actor.NewPID(addr, "some-grain"), &Add{N: 1})
			return false
		}, wait, 20*time.Millisecond, "no dial failure to the address of the member that left")
	}
	// The restart takes a while: longer than After (200 ms).
	<-time.After(300 * time.Millisecond) // the restart's duration, not an event

	unreachable := make(chan *cluster.MemberUnreachable, 8)
	for _, n := range []node{a, b} {
		actor.Subscribe(n.sys.EventStream(), func(ev *cluster.MemberUnreachable) { unreachable <- ev })
	}
	// The restarted member's handshakes are slow: held for 1 s (5 After,
	// 50 ticks), none fails. No dial to it has failed since it came, so
	// nobody has a reason to report it.
	gate := make(chan struct{})
	slow := func(c *remote.Config) {
		c.VerifyPeer = func(remote.Peer, *x509.Certificate) error { <-gate; return nil }
	}
	x2 := startReview13Member(t, reg, tune, slow, addr, "shop")
	awaitMembers(t, 3, a, b)
	select {
	case ev := <-unreachable:
		close(gate)
		t.Fatalf("the restarted member, whose handshakes are slow but none failed, was voted unreachable: %+v", ev)
	case <-time.After(time.Second): // the handshakes' duration, not an event
		close(gate)
	}
	awaitMembers(t, 3, x2)
	require.False(t, remote.Get(a.sys).BlockList().IsBlocked(addr))
	require.False(t, remote.Get(b.sys).BlockList().IsBlocked(addr))
}
