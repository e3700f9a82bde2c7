package remote_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/extension"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// TestInstall: the extension validates its config, is found by Get, gives
// the system its advertised address, and is gone after Shutdown (B1.1–B1.3).
func TestInstall(t *testing.T) {
	t.Run("not installed", func(t *testing.T) {
		sys := testkit.NewSystem(t)
		assert.Nil(t, remote.Get(sys))
		assert.Equal(t, actor.LocalAddress, sys.Address())
	})
	t.Run("invalid config", func(t *testing.T) {
		cfg := remote.DefaultConfig()
		cfg.OutboundQueueSize = 0
		_, err := actor.NewSystem(actor.SystemConfig{Extensions: []actor.ExtensionInstaller{remote.Install(cfg)}})
		require.ErrorIs(t, err, extension.ErrValidation)
		assert.ErrorIs(t, err, remote.ErrInvalidConfig)
	})
	t.Run("listen failure", func(t *testing.T) {
		cfg := testConfig(t)
		_, r := startSystem(t, "a", cfg)
		cfg.ListenAddress = r.Address() // taken
		_, err := actor.NewSystem(actor.SystemConfig{Extensions: []actor.ExtensionInstaller{remote.Install(cfg)}})
		require.ErrorIs(t, err, extension.ErrInstall)
	})
	t.Run("addresses", func(t *testing.T) {
		sys, r := startSystem(t, "a", testConfig(t))
		assert.Equal(t, r.Address(), sys.Address())
		assert.NotEmpty(t, r.NodeID())
		pid := sys.Root().Spawn(echoProps("a"))
		assert.Equal(t, r.Address(), pid.Address, "local PIDs carry the advertised address")
		// A PID spelled with either address reaches the same local actor.
		for _, p := range []*actor.PID{actor.NewPID(r.Address(), pid.ID), actor.NewPID(actor.LocalAddress, pid.ID)} {
			rep, err := actor.Request[*EchoReply](ctxWait(t), sys.Root(), p, &Echo{Text: "hi"})
			require.NoError(t, err)
			assert.Equal(t, "hi", rep.Text)
		}
		st, err := sys.Extensions().Status(remote.Name)
		require.NoError(t, err)
		assert.Equal(t, extension.Ready, st.State)
	})
}

// TestRequestResponse: requests and futures across two systems over TCP,
// with a JSON-registered and a protobuf message, from outside actors and
// from inside one; a request to a process that does not exist fails at once.
func TestRequestResponse(t *testing.T) {
	sysA, _ := startSystem(t, "a", testConfig(t))
	sysB, rb := startSystem(t, "b", testConfig(t))
	echo := remotePID(echoOn(t, sysB, "echo", "b"))
	require.Equal(t, rb.Address(), echo.Address)

	t.Run("json", func(t *testing.T) {
		rep, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), echo, &Echo{Text: "hello"})
		require.NoError(t, err)
		assert.Equal(t, &EchoReply{Text: "hello", By: "b"}, rep)
	})
	t.Run("protobuf", func(t *testing.T) {
		rep, err := actor.Request[*wrapperspb.StringValue](ctxWait(t), sysA.Root(), echo, wrapperspb.String("hello"))
		require.NoError(t, err)
		assert.Equal(t, "HELLO", rep.GetValue())
	})
	t.Run("future", func(t *testing.T) {
		f := sysA.Root().RequestFuture(echo, &Echo{Text: "f"}, wait)
		v, err := f.Result()
		require.NoError(t, err)
		assert.Equal(t, "f", v.(*EchoReply).Text)
	})
	t.Run("from an actor", func(t *testing.T) {
		probe := testkit.NewProbe(t, sysA)
		asker := sysA.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
			switch m := c.Message().(type) {
			case string:
				c.Request(echo, &Echo{Text: m})
			case *EchoReply:
				c.Send(probe.PID(), fmt.Sprintf("%s from %s", m.Text, c.Sender()))
			}
		}))
		sysA.Root().Send(asker, "ping")
		probe.ExpectMsgEqual("ping from "+echo.String(), wait)
	})
	t.Run("missing target", func(t *testing.T) {
		dl := events[*actor.DeadLetterEvent](t, sysB)
		_, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), actor.NewPID(rb.Address(), "nobody"), &Echo{Text: "x"})
		require.ErrorIs(t, err, actor.ErrDeadLetter, "the receiving node answers, so the request fails at once")
		e := waitFor(t, dl, "dead letter at b", func(e *actor.DeadLetterEvent) bool { return e.PID.ID == "nobody" })
		assert.Equal(t, &Echo{Text: "x"}, e.Message)
		assert.Equal(t, sysA.Address(), e.Sender.Address)
	})
	t.Run("guardian", func(t *testing.T) {
		// Guardians are not registered processes: a message for one from
		// another node is a dead letter there.
		dl := events[*actor.DeadLetterEvent](t, sysB)
		sysA.Root().Send(actor.NewPID(rb.Address(), "user"), &Echo{Text: "g"})
		waitFor(t, dl, "dead letter for the guardian", func(e *actor.DeadLetterEvent) bool { return e.PID.ID == "user" })
	})
}

// TestOrderingManySenders: three systems; two of them each run several
// goroutines that send numbered messages to one actor on the third. Every
// sender's messages arrive in the order it sent them, each system's through
// its own node.
func TestOrderingManySenders(t *testing.T) {
	const senders, perSender = 4, 1000
	cfg := func() remote.Config {
		c := testConfig(t)
		c.OutboundQueueSize = 4 * senders * perSender // never overflows: order is the point
		return c
	}
	sysA, ra := startSystem(t, "a", cfg())
	sysB, _ := startSystem(t, "b", cfg())
	sysC, rc := startSystem(t, "c", cfg())
	done := testkit.NewProbe(t, sysB)
	total := 2 * senders * perSender
	last := map[int]int{}
	var errs []string
	received := 0
	sink := sysB.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		m, ok := c.Message().(*Seq)
		if !ok {
			return
		}
		if m.N != last[m.From]+1 {
			errs = append(errs, fmt.Sprintf("sender %d: %d after %d", m.From, m.N, last[m.From]))
		}
		last[m.From] = m.N
		if received++; received == total {
			c.Send(done.PID(), errs)
		}
	}))
	// A PID per sending system: a PID caches the process it first resolved
	// to, and for a remote PID that is the remote process of the system
	// that resolved it. Shared, every sender would go through the node of
	// whichever system resolved it first, and the first messages of the
	// other system's senders through their own node: two connections,
	// whose deliveries interleave in any order.
	sinkOf := map[*actor.System]*actor.PID{sysA: remotePID(sink), sysC: remotePID(sink)}

	var wg sync.WaitGroup
	for i := range 2 * senders {
		sys := sysA
		if i >= senders {
			sys = sysC
		}
		wg.Go(func() {
			for n := 1; n <= perSender; n++ {
				sys.Root().Send(sinkOf[sys], &Seq{From: i, N: n})
			}
		})
	}
	wg.Wait()
	got := testkit.ExpectMsg[[]string](done, wait)
	assert.Empty(t, got, "per-sender order violated")
	assert.Zero(t, sysA.DeadLetters()+sysC.DeadLetters())
	// The counter moves after the write returns, which may be after the
	// delivery.
	for _, r := range []*remote.Remote{ra, rc} {
		require.Eventually(t, func() bool { return r.Node().Stats().EnvelopesSent == senders*perSender }, wait, time.Millisecond,
			"%s sent %d envelopes", r.Address(), r.Node().Stats().EnvelopesSent)
	}
}

// TestRemoteStopAndPoison: Stop and PoisonPill reach actors on other nodes.
func TestRemoteStopAndPoison(t *testing.T) {
	sysA, _ := startSystem(t, "a", testConfig(t))
	sysB, _ := startSystem(t, "b", testConfig(t))
	probe := testkit.NewProbe(t, sysA)
	for _, how := range []string{"stop", "poison"} {
		t.Run(how, func(t *testing.T) {
			pid := remotePID(echoOn(t, sysB, how, "b"))
			probe.Watch(pid)
			// The watch and the stop travel on one connection, in order.
			if how == "stop" {
				sysA.Root().Stop(pid)
			} else {
				sysA.Root().Poison(pid)
			}
			term := probe.ExpectTerminated(pid, wait)
			assert.Equal(t, actor.TerminatedStopped, term.Why)
		})
	}
	t.Run("stop future", func(t *testing.T) {
		// StopFuture watches with a future: the remote Terminated completes it.
		pid := remotePID(echoOn(t, sysB, "stop-future", "b"))
		v, err := sysA.Root().StopFuture(pid).ResultContext(ctxWait(t))
		require.NoError(t, err)
		assert.True(t, v.(*actor.Terminated).Who.Equal(pid))
	})
}

// TestExtensionShutdown: after the remote extension shut down, sends to
// remote PIDs are dead letters with ErrStopped, and requests fail at once.
func TestExtensionShutdown(t *testing.T) {
	sysA, ra := startSystem(t, "a", testConfig(t))
	sysB, _ := startSystem(t, "b", testConfig(t))
	echo := remotePID(echoOn(t, sysB, "echo", "b"))
	_, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), echo, &Echo{})
	require.NoError(t, err)
	require.NoError(t, ra.Shutdown(context.Background()))
	_, err = actor.Request[*EchoReply](ctxWait(t), sysA.Root(), echo, &Echo{})
	require.ErrorIs(t, err, remote.ErrStopped)
	_, err = ra.SpawnNamed(ctxWait(t), echo.Address, "", "echo")
	require.True(t, errors.Is(err, remote.ErrStopped), "spawn after shutdown: %v", err)
}
