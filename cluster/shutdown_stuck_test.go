package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// stuckEvictor is a provider whose Evict blocks, ctx or not, until
// released: user code on one of the cluster's tracked goroutines.
type stuckEvictor struct {
	*cluster.MemoryRegistry
	entered, release chan struct{}
}

func (p *stuckEvictor) Evict(context.Context, cluster.Member) error {
	close(p.entered)
	<-p.release
	return nil
}

// A provider's Evict that does not return makes the cluster's Shutdown
// end at its ctx with ErrShuttingDown, and the system's Terminated closes
// once it returns; before, Shutdown waited for it for good.
func TestClusterShutdownBoundedByStuckUserCode(t *testing.T) {
	p := &stuckEvictor{MemoryRegistry: newRegistry(t), entered: make(chan struct{}), release: make(chan struct{})}
	a := startMember(t, p, counterKind())
	awaitMembers(t, 1, a)
	ctx := ctxWait(t)
	const addr = "127.0.0.1:1"
	m, err := p.Join(ctx, cluster.Member{ID: "ghost", Incarnation: 1, Address: addr, Kinds: []string{"counter"}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Stop(context.Background()) })
	awaitMembers(t, 2, a)
	remote.Get(a.sys).BlockList().Block(addr) // the cluster evicts the blocked member
	select {
	case <-p.entered:
	case <-ctx.Done():
		t.Fatal("Evict was never called")
	}

	shut := make(chan error, 1)
	go func() {
		sctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		shut <- a.sys.Shutdown(sctx)
	}()
	select {
	case err := <-shut:
		require.ErrorIs(t, err, cluster.ErrShuttingDown)
		require.ErrorIs(t, err, context.DeadlineExceeded)
	case <-time.After(30 * time.Second):
		close(p.release)
		t.Fatal("Shutdown did not end at its ctx while Evict was stuck")
	}
	select {
	case <-a.sys.Terminated():
		t.Fatal("the system terminated while the cluster's Evict still ran")
	default:
	}
	close(p.release)
	select {
	case <-a.sys.Terminated():
	case <-ctx.Done():
		t.Fatal("the system never terminated after Evict returned")
	}
	require.Equal(t, cluster.StatusStopped, a.c.Status())
	require.NoError(t, a.sys.Shutdown(ctx), "a later Shutdown after the system terminated")
}
