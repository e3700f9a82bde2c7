package cluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
)

// lingeringRegistry hands out the registry's memberships with a Terminated
// channel the test closes (extension.Lingerer): a provider whose goroutines
// outlive a Leave cut short by its ctx, as Consul's do while an agent
// request has not seen its cancellation.
type lingeringRegistry struct {
	*cluster.MemoryRegistry
	term chan struct{}
}

func (r *lingeringRegistry) Join(ctx context.Context, self cluster.Member) (cluster.Membership, error) {
	m, err := r.MemoryRegistry.Join(ctx, self)
	if err != nil {
		return nil, err
	}
	return &lingeringMembership{Membership: m, term: r.term}, nil
}

type lingeringMembership struct {
	cluster.Membership
	term chan struct{}
}

func (m *lingeringMembership) Terminated() <-chan struct{} { return m.term }

// Founded forwards the registry membership's (the founder skips the
// wait-out).
func (m *lingeringMembership) Founded() (time.Time, bool) {
	return m.Membership.(interface{ Founded() (time.Time, bool) }).Founded()
}

// The cluster's Terminated, and the actor system's, wait for the goroutines
// a membership still runs after the cluster left it (a Membership that
// implements extension.Lingerer). Before, they closed as soon as the
// cluster's own goroutines had returned, and a test's goleak after
// <-sys.Terminated() could see the Consul membership's renewal or
// service-check loop still on its way out.
func TestClusterTerminatedWaitsForLingeringMembership(t *testing.T) {
	reg := &lingeringRegistry{MemoryRegistry: newRegistry(t), term: make(chan struct{})}
	released := false
	defer func() {
		if !released {
			close(reg.term)
		}
	}()
	a := startMember(t, reg, counterKind())
	awaitMembers(t, 1, a)
	_, err := cluster.Request[*Total](ctxWait(t), a.c, cluster.NewIdentity("counter", "1"), &Add{N: 1})
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err = a.c.Shutdown(ctx)
	require.ErrorIs(t, err, cluster.ErrShuttingDown, "Shutdown waits for the membership's goroutines within its ctx")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	select {
	case <-a.c.Terminated():
		t.Fatal("the cluster's Terminated closed while its membership's goroutines still ran")
	default:
	}
	close(reg.term)
	released = true
	select {
	case <-a.c.Terminated():
	case <-time.After(wait):
		t.Fatal("the cluster's Terminated never closed")
	}
	// The system's Shutdown waits for the rest and finds nothing left.
	sctx, scancel := context.WithTimeout(context.Background(), wait)
	defer scancel()
	if err := a.sys.Shutdown(sctx); err != nil && !errors.Is(err, cluster.ErrShuttingDown) {
		t.Fatalf("system shutdown: %v", err)
	}
	select {
	case <-a.sys.Terminated():
	case <-time.After(wait):
		t.Fatal("the system's Terminated never closed")
	}
}
