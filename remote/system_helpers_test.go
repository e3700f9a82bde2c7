package remote_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/internal/testnet"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// wait bounds every wait in the actor-level tests; they never sleep.
const wait = 15 * time.Second

// Messages of the actor-level tests (JSON-registered).
type (
	Echo      struct{ Text string }
	EchoReply struct{ Text, By string }
	Seq       struct{ From, N int }
	// OnlyA is registered on some systems only.
	OnlyA struct{ X int }
	// NotRegistered is registered nowhere.
	NotRegistered struct{ X int }
)

// newSerializers registers the test messages; withOnlyA adds OnlyA.
func newSerializers(t testing.TB, withOnlyA bool) *remote.Serializers {
	t.Helper()
	ser := remote.NewSerializers()
	require.NoError(t, remote.RegisterJSON[*Echo](ser, "test.Echo"))
	require.NoError(t, remote.RegisterJSON[*EchoReply](ser, "test.EchoReply"))
	require.NoError(t, remote.RegisterJSON[*Seq](ser, "test.Seq"))
	require.NoError(t, ser.RegisterProto(&wrapperspb.StringValue{}))
	if withOnlyA {
		require.NoError(t, remote.RegisterJSON[*OnlyA](ser, "test.OnlyA"))
	}
	return ser
}

// echoProps answers Echo with EchoReply (By = by) and StringValue with its
// upper-case form.
func echoProps(by string) *actor.Props {
	return actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *Echo:
			c.Respond(&EchoReply{Text: m.Text, By: by})
		case *wrapperspb.StringValue:
			c.Respond(wrapperspb.String(strings.ToUpper(m.GetValue())))
		case *OnlyA:
			c.Respond(&EchoReply{Text: "onlyA", By: by})
		}
	})
}

// testConfig is the transport's test config with the test serializers.
func testConfig(t testing.TB) remote.Config {
	cfg := remote.NodeTestConfig()
	cfg.Serializers = newSerializers(t, false)
	return cfg
}

// startSystem starts an actor system with remote installed; it is shut
// down when the test ends (goleak runs in TestMain).
func startSystem(t testing.TB, name string, cfg remote.Config, opts ...remote.Option) (*actor.System, *remote.Remote) {
	t.Helper()
	sys := testkit.NewPeerSystem(t, func(c *actor.SystemConfig) {
		c.Name = name
		c.Extensions = []actor.ExtensionInstaller{remote.Install(cfg, opts...)}
	})
	r := remote.Get(sys)
	require.NotNil(t, r)
	return sys, r
}

// crash closes a node's connections without a goodbye, as if its process
// had died; its system stays up (and is shut down at cleanup).
func crash(t testing.TB, r *remote.Remote) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = r.Node().Close(ctx)
}

// restartAt crashes the node of sys (r, its remote), shuts sys down and
// starts a new system named name listening at the same address: a node
// that died and came back.
func restartAt(t *testing.T, sys *actor.System, r *remote.Remote, name string) *actor.System {
	t.Helper()
	addr := r.Address()
	crash(t, r)
	require.NoError(t, sys.Shutdown(ctxWait(t)))
	cfg := testConfig(t)
	cfg.ListenAddress = addr
	next, rnext := startSystem(t, name, cfg)
	require.Equal(t, addr, rnext.Address())
	return next
}

// closedAddress returns a loopback address where nothing listens.
func closedAddress(t *testing.T) string { return testnet.ClosedAddress(t) }

// events subscribes to events of type T on sys's EventStream.
func events[T any](t testing.TB, sys *actor.System) <-chan T {
	ch := make(chan T, 4096)
	sub := actor.Subscribe(sys.EventStream(), func(e T) {
		select {
		case ch <- e:
		default:
		}
	})
	t.Cleanup(func() { sys.EventStream().Unsubscribe(sub) })
	return ch
}

// waitFor takes events from ch until one satisfies pred.
func waitFor[T any](t testing.TB, ch <-chan T, what string, pred func(T) bool) T {
	t.Helper()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case e := <-ch:
			if pred == nil || pred(e) {
				return e
			}
		case <-timer.C:
			t.Fatalf("timed out waiting for %s", what)
			var zero T
			return zero
		}
	}
}

// deadLetterWith matches dead letters whose reason wraps target.
func deadLetterWith(target error) func(*actor.DeadLetterEvent) bool {
	return func(e *actor.DeadLetterEvent) bool { return errors.Is(e.Reason, target) }
}

// ctxWait is a context bounded by wait.
func ctxWait(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

// echoOn spawns an echo actor named name on sys.
func echoOn(t testing.TB, sys *actor.System, name, by string) *actor.PID {
	t.Helper()
	pid, err := sys.Root().SpawnNamed(echoProps(by), name)
	require.NoError(t, err)
	return pid
}

// remotePID is pid as seen from another node: a fresh PID with its address.
// A PID caches the process it first resolved to (for a remote PID, the
// remote process of the system that resolved it), so every system that
// sends to pid needs a remotePID of its own.
func remotePID(pid *actor.PID) *actor.PID { return actor.NewPID(pid.Address, pid.ID) }

// newProbeWatching returns a probe on sys that watches echo (an echo actor
// on another node), once the watch is in place there.
func newProbeWatching(t *testing.T, sys *actor.System, echo *actor.PID) *testkit.Probe {
	t.Helper()
	p := testkit.NewProbe(t, sys)
	p.Watch(echo)
	watchInPlace(t, sys, echo)
	return p
}

// barePeer starts a bare Node (no actor system) that a test drives by
// hand, as a hostile peer would; the EchoReplies it receives arrive on
// replies.
func barePeer(t testing.TB) (*remote.Node, chan *EchoReply) {
	t.Helper()
	replies := make(chan *EchoReply, 1)
	cfg := remote.NodeTestConfig()
	cfg.Serializers = newSerializers(t, false)
	peer, err := remote.NewNode(cfg, remote.Hooks{
		Deliver: func(_ remote.Peer, env remote.Envelope) {
			if m, ok := env.Message.(*EchoReply); ok {
				replies <- m
			}
		},
	})
	require.NoError(t, err)
	require.NoError(t, peer.Start(context.Background()))
	t.Cleanup(func() { _ = peer.Close(ctxWait(t)) })
	return peer, replies
}
