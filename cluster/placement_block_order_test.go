package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster/internal/clusterpb"
	"github.com/fraktor-go/fraktor/remote"
)

// noEvict hides the registry's Evictor: a blocked member stays in the view.
type noEvict struct{ Provider }

// The placement actor leaves the members remote's block list names out of
// the ring it builds for a new view (placementActor.install), but only for
// a view it rebuilds the ring for. Marked blocked on a view that only moves
// the epoch, a member stayed in the ring, and the block's own message,
// queued behind that view, then found it marked and skipped its rebuild:
// the placement kept the blocked member as the owner of its identities
// while callers, whose ring left it out, asked this member for them.
func TestPlacementBlockAfterSameHashView(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	reg, err := NewMemoryRegistry(DefaultMemoryConfig())
	require.NoError(t, err)
	t.Cleanup(reg.Close)
	// m has no process: only its place in the views matters.
	m := Member{ID: "m", Incarnation: 1, Address: "10.255.0.1:1", Kinds: []string{"k"}}
	mm, err := reg.Join(ctx, m)
	require.NoError(t, err)
	t.Cleanup(func() { _ = mm.Stop(context.Background()) })
	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress, rcfg.SystemName = "127.0.0.1:0", "shop"
	kind := NewKind("k", actor.PropsFromFunc(func(actor.Context) {}))
	sys, err := actor.NewSystem(actor.SystemConfig{Name: "shop", Extensions: []actor.ExtensionInstaller{
		remote.Install(rcfg), Install(Config{Name: "shop", Provider: noEvict{reg}, Kinds: []Kind{kind}}),
	}})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, sys.Shutdown(ctx))
	})
	c := Get(sys)
	ready := make(chan struct{}, 1)
	sub := actor.Subscribe(sys.EventStream(), func(ev *ClusterStatusChanged) {
		if ev.To == StatusReady {
			ready <- struct{}{}
		}
	})
	defer sys.EventStream().Unsubscribe(sub)
	if c.Status() != StatusReady {
		select {
		case <-ready:
		case <-ctx.Done():
			t.Fatal("never ready")
		}
	}
	tp, ok := c.Topology()
	require.True(t, ok)
	require.Len(t, tp.Members, 2, "m and this member")
	x := func() Identity {
		ring := c.strategy.Build(tp)
		for i := 0; ; i++ {
			id := NewIdentity("k", string(rune('a'+i%26))+string(rune('a'+i/26)))
			if o, err := ring.Owner(id); err == nil && o.Key() == m.Key() {
				return id
			}
		}
	}()

	// The block reaches the placement actor after a view with the same
	// hash: detach the runtime's block-list subscriber and send, in that
	// order, what a view and the subscriber would.
	for _, u := range c.unsub {
		u()
	}
	remote.Get(sys).BlockList().Block(m.Address)
	same := tp
	same.Epoch++
	c.root.Send(c.placement, &viewMsg{topo: same, m: c.membership.Load().m})
	c.root.Send(c.placement, &blockMsg{member: m})

	res, err := c.root.RequestFuture(c.placement, &clusterpb.ActivationRequest{Kind: "k", Id: x.ID, Epoch: same.Epoch,
		TopologyHash: same.Hash, Requester: "test"}, 10*time.Second).ResultContext(ctx)
	require.NoError(t, err)
	resp := res.(*clusterpb.ActivationResponse)
	require.NotEqual(t, clusterpb.ActivationStatus_ACTIVATION_STATUS_OWNERSHIP_CHANGED, resp.Status,
		"the blocked member still owns %s: %s", x, resp.Error)
}
