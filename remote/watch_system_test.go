package remote_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/scheduler"
	"github.com/fraktor-go/fraktor/testkit"
)

// watchInPlace returns once a Watch sent earlier from sys to pid's node has
// been applied there: a request to pid's node travels behind it on the same
// connection.
func watchInPlace(t *testing.T, sys *actor.System, echo *actor.PID) {
	t.Helper()
	_, err := actor.Request[*EchoReply](ctxWait(t), sys.Root(), echo, &Echo{Text: "sync"})
	require.NoError(t, err)
}

// TestRemoteWatch: Terminated crosses nodes when the watched actor stops
// (and tells NotFound for a missing one); Unwatch cancels; the watches are
// forgotten on both sides once they ended.
func TestRemoteWatch(t *testing.T) {
	sysA, ra := startSystem(t, "a", testConfig(t))
	sysB, rb := startSystem(t, "b", testConfig(t))
	probe := testkit.NewProbe(t, sysA)
	echo := remotePID(echoOn(t, sysB, "echo", "b"))

	t.Run("stopped", func(t *testing.T) {
		local := echoOn(t, sysB, "w1", "b")
		pid := remotePID(local)
		probe.Watch(pid)
		watchInPlace(t, sysA, echo)
		out, _ := ra.WatchCounts()
		_, in := rb.WatchCounts()
		assert.Equal(t, 1, out)
		assert.Equal(t, 1, in)
		require.NoError(t, sysB.Root().StopFuture(local).Wait())
		term := probe.ExpectTerminated(pid, wait)
		assert.Equal(t, actor.TerminatedStopped, term.Why)
		testkit.Eventually(t, func() bool {
			out, _ := ra.WatchCounts()
			_, in := rb.WatchCounts()
			return out == 0 && in == 0
		}, wait, "watch bookkeeping cleared")
	})
	t.Run("not found", func(t *testing.T) {
		pid := actor.NewPID(rb.Address(), "ghost")
		probe.Watch(pid)
		term := probe.ExpectTerminated(pid, wait)
		assert.Equal(t, actor.TerminatedNotFound, term.Why)
	})
	t.Run("same ID as a local child", func(t *testing.T) {
		// A parent "p" on A has a child "p/c" and watches B's "p/c": the
		// remote Terminated must not be mistaken for its child's.
		remoteChild := echoOn(t, sysB, "p/c", "b")
		parent, err := sysA.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
			switch m := c.Message().(type) {
			case *actor.Started:
				if _, err := c.SpawnNamed(echoProps("a"), "c"); err != nil {
					panic(err)
				}
				c.Watch(remotePID(remoteChild))
				c.Request(echo, &Echo{})
			case *EchoReply:
				c.Send(probe.PID(), "watching")
			case *actor.Terminated:
				c.Send(probe.PID(), fmt.Sprintf("%s %s children=%d", m.Who, m.Why, len(c.Children())))
			}
		}), "p")
		require.NoError(t, err)
		probe.ExpectMsgEqual("watching", wait)
		require.NoError(t, sysB.Root().StopFuture(remoteChild).Wait())
		probe.ExpectMsgEqual(fmt.Sprintf("%s/p/c Stopped children=1", rb.Address()), wait)
		require.NoError(t, sysA.Root().StopFuture(parent).Wait())
	})
	t.Run("unwatch", func(t *testing.T) {
		local := echoOn(t, sysB, "w2", "b")
		pid := remotePID(local)
		// An actor on A watches, then unwatches, then asks for proof.
		watcher := sysA.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
			switch c.Message() {
			case "watch-unwatch":
				c.Watch(pid)
				c.Unwatch(pid)
				c.Request(echo, &Echo{Text: "after-unwatch"})
			case "sync":
				c.Request(echo, &Echo{Text: "sync"})
			}
			switch c.Message().(type) {
			case *EchoReply:
				c.Send(probe.PID(), "synced")
			case *actor.Terminated:
				c.Send(probe.PID(), "unexpected terminated")
			}
		}))
		sysA.Root().Send(watcher, "watch-unwatch")
		probe.ExpectMsgEqual("synced", wait)
		_, in := rb.WatchCounts()
		assert.Zero(t, in, "b forgot the watcher")
		require.NoError(t, sysB.Root().StopFuture(local).Wait())
		// Had b sent a Terminated, it would arrive before this reply: both
		// travel on one connection, the Terminated first.
		sysA.Root().Send(watcher, "sync")
		probe.ExpectMsgEqual("synced", wait)
	})
}

// TestRemoteWatchPeerCrash: the watched actor's node dies without a goodbye
// (its sockets close; it never answers again). After GiveUpAfter (an hour
// on the watchers' manual clock, moved once their redials failed) the
// watchers on two other nodes get Terminated{AddressTerminated} and an
// EndpointTerminated event is published.
func TestRemoteWatchPeerCrash(t *testing.T) {
	cfg := testConfig(t)
	cfg.GiveUpAfter = time.Hour
	clock := scheduler.NewManualClock(time.Now())
	sysA, _ := startSystem(t, "a", cfg, remote.WithClock(clock))
	sysC, _ := startSystem(t, "c", cfg, remote.WithClock(clock))
	sysB, rb := startSystem(t, "b", testConfig(t))
	echo := echoOn(t, sysB, "echo", "b")
	target := echoOn(t, sysB, "target", "b")

	// A PID caches the process it resolved to in the system that used it
	// first: each system gets its own PID value.
	var probes []*testkit.Probe
	var targets []*actor.PID
	var ends []<-chan *remote.EndpointTerminated
	var transport []<-chan *remote.Event
	for _, sys := range []*actor.System{sysA, sysC} {
		p := testkit.NewProbe(t, sys)
		tp := remotePID(target)
		p.Watch(tp)
		watchInPlace(t, sys, remotePID(echo))
		probes = append(probes, p)
		targets = append(targets, tp)
		ends = append(ends, events[*remote.EndpointTerminated](t, sys))
		transport = append(transport, events[*remote.Event](t, sys))
	}
	_, in := rb.WatchCounts()
	require.Equal(t, 2, in)

	crash(t, rb)
	// The failed redial (refused, or accepted by the closing listener and
	// then cut in the handshake) comes after the endpoint noted the loss on
	// its clock; from then on, moving the clock by GiveUpAfter gives up.
	for _, ch := range transport {
		waitFor(t, ch, "a failed redial", func(e *remote.Event) bool {
			redial := e.Kind == remote.EventDialFailed || (e.Kind == remote.EventHandshakeRefused && !e.Inbound)
			return redial && e.Peer.Address == rb.Address()
		})
	}
	clock.Advance(cfg.GiveUpAfter)
	for i, p := range probes {
		term := p.ExpectTerminated(targets[i], wait)
		assert.Equal(t, actor.TerminatedAddressTerminated, term.Why)
		ev := waitFor(t, ends[i], "endpoint terminated", nil)
		assert.Equal(t, rb.Address(), ev.Address)
		assert.Equal(t, rb.NodeID(), ev.NodeID)
		assert.ErrorIs(t, ev.Reason, remote.ErrPeerUnreachable)
	}
}

// TestRemoteWatchPeerShutdown: a peer that shuts down gracefully says
// goodbye, so its watchers are told at once (no give-up wait).
func TestRemoteWatchPeerShutdown(t *testing.T) {
	sysA, _ := startSystem(t, "a", testConfig(t)) // GiveUpAfter 10 s: must not be waited for
	sysB, err := actor.NewSystem(actor.SystemConfig{Name: "b", Extensions: []actor.ExtensionInstaller{remote.Install(testConfig(t))}})
	require.NoError(t, err)
	echo := remotePID(echoOn(t, sysB, "echo", "b"))
	probe := testkit.NewProbe(t, sysA)
	probe.Watch(echo)
	watchInPlace(t, sysA, echo)
	ends := events[*remote.EndpointTerminated](t, sysA)
	require.NoError(t, sysB.Shutdown(ctxWait(t)))
	term := probe.ExpectTerminated(echo, 5*time.Second)
	assert.Equal(t, actor.TerminatedAddressTerminated, term.Why)
	ev := waitFor(t, ends, "endpoint terminated", nil)
	assert.ErrorIs(t, ev.Reason, remote.ErrPeerShutdown)
}

// TestReconnectAfterPeerRestart: a node dies and a new incarnation starts on
// the same address. Watchers of the old incarnation are told it is gone
// (the restart is noticed in the handshake), and messages reach the new one.
func TestReconnectAfterPeerRestart(t *testing.T) {
	sysA, _ := startSystem(t, "a", testConfig(t))
	b1, err := actor.NewSystem(actor.SystemConfig{Name: "b1", Extensions: []actor.ExtensionInstaller{remote.Install(testConfig(t))}})
	require.NoError(t, err)
	rb1 := remote.Get(b1)
	echo := remotePID(echoOn(t, b1, "echo", "b1"))
	rep, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), echo, &Echo{Text: "one"})
	require.NoError(t, err)
	assert.Equal(t, "b1", rep.By)
	probe := testkit.NewProbe(t, sysA)
	probe.Watch(echo)
	watchInPlace(t, sysA, echo)
	ends := events[*remote.EndpointTerminated](t, sysA)

	b2 := restartAt(t, b1, rb1, "b2")
	echoOn(t, b2, "echo", "b2")

	term := probe.ExpectTerminated(echo, wait)
	assert.Equal(t, actor.TerminatedAddressTerminated, term.Why)
	ev := waitFor(t, ends, "endpoint terminated", nil)
	assert.Equal(t, rb1.NodeID(), ev.NodeID)
	assert.True(t, errors.Is(ev.Reason, remote.ErrPeerRestarted) || errors.Is(ev.Reason, remote.ErrPeerUnreachable), "%v", ev.Reason)

	// The same PID value now reaches the new incarnation.
	rep, err = actor.Request[*EchoReply](ctxWait(t), sysA.Root(), echo, &Echo{Text: "two"})
	require.NoError(t, err)
	assert.Equal(t, &EchoReply{Text: "two", By: "b2"}, rep)
	// And the other way round.
	echoA := remotePID(echoOn(t, sysA, "echo-a", "a"))
	rep, err = actor.Request[*EchoReply](ctxWait(t), b2.Root(), echoA, &Echo{Text: "three"})
	require.NoError(t, err)
	assert.Equal(t, "a", rep.By)
}
