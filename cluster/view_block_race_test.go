package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// A block-list update rebuilds the caller-side ring of the current view.
// It runs on the goroutine that changed the block list while views arrive
// on the membership goroutine: an update that read the view before a new
// one was installed must not store its ring over the new view (the caller
// side would then ask owners under an older view, and every activation
// request would be refused as OwnershipChanged until the next view came).
// Not deterministic: the updates and the views race freely; with the
// defect a reverted view showed within the first few hundred views.
func TestBlockUpdateNeverRevertsTheView(t *testing.T) {
	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress = "127.0.0.1:0"
	sys, err := actor.NewSystem(actor.SystemConfig{Name: "race", Extensions: []actor.ExtensionInstaller{remote.Install(rcfg)}})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, sys.Shutdown(ctx))
	})
	placement := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	lookup, err := NewPartitionIdentityLookup(DefaultLookupConfig())
	require.NoError(t, err)
	require.NoError(t, lookup.SetupClient(nil))
	c := &Cluster{sys: sys, root: sys.Root(), remote: remote.Get(sys), log: slog.New(slog.DiscardHandler),
		strategy: HashConfig{}.Strategy(), lookup: lookup, cache: lookup.Cache(), blocked: map[string]struct{}{},
		placement: placement}

	blocked := Member{ID: "b", Incarnation: 1, Address: "10.0.0.2:4000", Kinds: []string{"k"}}
	view := func(epoch uint64) Topology {
		ms := []Member{blocked, {ID: fmt.Sprint("m", epoch), Incarnation: 1, Address: "10.0.0.3:4000", Kinds: []string{"k"}}}
		return NewTopology(epoch, ms)
	}
	c.installView(view(1), nil)
	var installed atomic.Uint64 // the epoch of the last view installView stored
	installed.Store(1)
	stop := make(chan struct{})
	var reverted atomic.Uint64
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			c.onBlockEvent(remote.BlockEvent{Keys: []string{blocked.ID}}) // an unblock: the view's ring rebuilt
			done := installed.Load()
			if v := c.view.Load(); v.topo.Epoch < done {
				reverted.Store(v.topo.Epoch)
				return
			}
		}
	})
	for epoch := uint64(2); epoch <= 3000 && reverted.Load() == 0; epoch++ {
		c.installView(view(epoch), nil)
		installed.Store(epoch)
	}
	close(stop)
	wg.Wait()
	require.Zero(t, reverted.Load(), "a block update stored an older view over a newer one")
}
