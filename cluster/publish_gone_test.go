package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// A resolution publishes the PID it was answered with after the answer
// arrived; a grain of this member may have stopped and left the table of
// activations meanwhile (a handover, a passivation right after it
// started). Its PID must not go into the PidCache instead: a local grain
// never has an entry there, and that one would lead to a dead grain for
// the PidCache TTL, taking every Send to the identity from this member as
// a dead letter until a request failed on it.
func TestPublishGoneLocalGrainNotCached(t *testing.T) {
	reg, err := NewMemoryRegistry(DefaultMemoryConfig())
	require.NoError(t, err)
	t.Cleanup(reg.Close)
	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress, rcfg.SystemName = "127.0.0.1:0", "shop"
	kind := NewKind("k", actor.PropsFromFunc(func(actor.Context) {}))
	sys, err := actor.NewSystem(actor.SystemConfig{Name: "shop", Extensions: []actor.ExtensionInstaller{
		remote.Install(rcfg), Install(Config{Name: "shop", Provider: reg, Kinds: []Kind{kind}}),
	}})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, sys.Shutdown(ctx))
	})
	c := Get(sys)
	// The first view drops the PidCache entries of members absent from it
	// ("b#1" below is): published before that view, the entry could be
	// gone by the time it is read (2 failures in 300 runs).
	awaitFirstView(t, sys, c)
	id := NewIdentity("k", "gone")
	gone := actor.NewPID(sys.Address(), "#1/k/gone") // answered, then stopped
	c.publish(id, gone, c.Self().Key())
	_, cached := c.cache.Get(id, c.now())
	require.False(t, cached, "a gone local grain's PID in the PidCache")
	require.Nil(t, c.cached(id, c.now()))

	other := actor.NewPID("10.0.0.9:4000", "#1/k/gone") // another member's grain
	c.publish(id, other, "b#1")
	require.Same(t, other, c.cached(id, c.now()))
}

// awaitFirstView waits until c has installed its first caller-side view:
// it subscribes to TopologyChanged (published once the view is in place),
// then reads Topology, so the view is not missed.
func awaitFirstView(t *testing.T, sys *actor.System, c *Cluster) {
	t.Helper()
	installed := make(chan struct{}, 1)
	sub := actor.Subscribe(sys.EventStream(), func(*TopologyChanged) {
		select {
		case installed <- struct{}{}:
		default:
		}
	})
	defer sys.EventStream().Unsubscribe(sub)
	if _, ok := c.Topology(); ok {
		return
	}
	select {
	case <-installed:
	case <-time.After(10 * time.Second):
		t.Fatal("no view")
	}
}
