package cluster_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/cluster/internal/clusterpb"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// signalHandler is a slog handler that signals on every record with msg.
type signalHandler struct {
	msg string
	ch  chan struct{}
}

func (h signalHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h signalHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h signalHandler) WithGroup(string) slog.Handler            { return h }
func (h signalHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.ch <- struct{}{}
	}
	return nil
}

// The tick the runtime asks of the placement actor when the membership
// lease is lost or revoked replaces the periodic tick's timer instead of
// adding one: before, each such event started another timer chain for the
// member's life, so a member whose lease was lost k times (renewals that
// failed for a while, then recovered) ticked k+1 times per TickInterval,
// each tick sweeping its activations and sending its view acknowledgement
// to every member. Driven by a manual clock: each lost lease left one more
// timer pending.
func TestClusterLeaseEventsKeepOneTickTimer(t *testing.T) {
	clock, reg := manualRegistry(t) // renewals every 500 ms, fence period 2 s
	renew := cluster.DefaultMemoryConfig().RenewInterval
	ccfg := cluster.Config{Name: "shop", Provider: reg, Kinds: []cluster.Kind{counterKind()}}
	ccfg.TickInterval = time.Hour // only ticks at the lease's fence time fall due here (they re-arm the one timer)
	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress, rcfg.SystemName, rcfg.Serializers = "127.0.0.1:0", "shop", serializers(t)
	// The membership goroutine logs the stale view after it handled the
	// lost lease (the feed emits them in that order): by then it has asked
	// the placement actor for its tick.
	stale := make(chan struct{}, 16)
	sys := testkit.NewPeerSystem(t, func(c *actor.SystemConfig) {
		c.Name = "shop"
		c.Clock = clock
		c.Logger = slog.New(signalHandler{msg: "cluster: membership view stale, keeping the last view", ch: stale})
		c.Extensions = []actor.ExtensionInstaller{remote.Install(rcfg), cluster.Install(ccfg)}
	})
	a := node{sys: sys, c: cluster.Get(sys)}
	awaitMembers(t, 1, a)
	placement := actor.NewPID(sys.Address(), "$placement")
	// The placement actor answers in order: once it has, what was sent to
	// it before is handled.
	handled := func() {
		t.Helper()
		_, err := sys.Root().RequestFuture(placement, &clusterpb.ActivationRequest{Kind: "other", Id: "x"}, 0).ResultContext(ctxWait(t))
		require.NoError(t, err)
	}
	handled()
	pending := clock.Pending()
	key := a.c.Self().Key()
	for i := range 5 {
		reg.Partition(key)
		clock.Advance(renew) // the renewal fails: lease lost (valid for 1.5 s more)
		select {
		case <-stale:
		case <-time.After(wait):
			t.Fatalf("cycle %d: the lost lease was never handled", i)
		}
		handled()
		reg.Heal(key)
		clock.Advance(renew) // the renewal succeeds: lease restored
		handled()
		require.Equal(t, cluster.StatusReady, a.c.Status(), "cycle %d: the member fenced", i)
	}
	require.Equal(t, pending, clock.Pending(), "timers pending after 5 lost leases (one more per tick timer)")
}
