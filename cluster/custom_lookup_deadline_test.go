package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// slowStartMember starts a member with a custom lookup whose "slow" grains
// do not finish Started until the test ends, so the owner never answers
// their activation; ActivationTimeout and RequestTimeout are far beyond
// the test's waits. It
// returns the member and a request for slow/s running in the background
// with ctx, once that grain is starting. With shutByTest, the test shuts
// the member down with a deadline it lets pass, so the cleanup's shutdown
// expects that deadline's error (Shutdown returns its first call's).
func slowStartMember(t *testing.T, ctx context.Context, shutByTest bool) (node, <-chan error) {
	t.Helper()
	release := make(chan struct{})
	starting := make(chan struct{}, 1)
	slow := cluster.NewKind("slow", actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			select {
			case starting <- struct{}{}:
			default:
			}
			<-release // the owner answers the activation only once this grain started
		}
	}))
	custom := func(c *cluster.Config) {
		c.ActivationTimeout = 10 * wait
		c.RequestTimeout = 10 * wait
		c.IdentityLookup = func(activate cluster.Activator) (cluster.IdentityLookup, error) {
			return cluster.NewPartitionIdentityLookup(cluster.DefaultLookupConfig(), cluster.WithActivator(activate))
		}
	}
	reg := newRegistry(t)
	var nd node
	if shutByTest {
		nd = ownedMember(t, reg, custom, slow)
	} else {
		nd = startMemberWith(t, reg, custom, slow)
	}
	t.Cleanup(func() { close(release) }) // runs before the member's shutdown
	awaitMembers(t, 1, nd)
	done := make(chan error, 1)
	go func() {
		_, err := cluster.Request[*Total](ctx, nd.c, cluster.NewIdentity("slow", "s"), &Get{})
		done <- err
	}()
	<-starting
	return nd, done
}

// A custom lookup's Activator asks the owner within the deadline of the
// request that needed the activation. Before, it asked within
// ActivationTimeout alone (its signature has no context): a request with a
// short deadline, resolving through a custom lookup, waited for the
// owner's answer long after its own deadline had passed.
func TestClusterCustomLookupActivationHonoursCallerDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, done := slowStartMember(t, ctx, false)
	select {
	case err := <-done:
		require.ErrorIs(t, err, cluster.ErrTimeout) // at its deadline (the attempt's timer or ctx)
	case <-time.After(wait):
		t.Fatal("the request outlived its deadline: its activation waited for ActivationTimeout")
	}
}

// With the caller's context, the Activator still ends at Shutdown: a
// request with a long deadline, waiting in a custom lookup's activation,
// fails with ErrShuttingDown when the member shuts down.
func TestClusterCustomLookupActivationEndsAtShutdown(t *testing.T) {
	nd, done := slowStartMember(t, context.Background(), true)
	shutCtx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	// The slow grain is still starting: Shutdown gives up on it at
	// shutCtx's end and then ends the cluster's context.
	require.ErrorIs(t, nd.c.Shutdown(shutCtx), cluster.ErrShuttingDown)
	select {
	case err := <-done:
		require.ErrorIs(t, err, cluster.ErrShuttingDown)
	case <-time.After(wait):
		t.Fatal("the request outlived the cluster: its activation ignored Shutdown")
	}
}

// ownedMember is startMemberWith's member, shut down at cleanup with the
// cluster's Shutdown error allowed: the test's own Shutdown let its
// deadline pass. The package's goleak check still covers its goroutines.
func ownedMember(t *testing.T, reg cluster.Provider, tune func(*cluster.Config), kinds ...cluster.Kind) node {
	t.Helper()
	ccfg := cluster.Config{Name: "shop", Provider: reg, Kinds: kinds}
	tune(&ccfg)
	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress = "127.0.0.1:0"
	rcfg.SystemName = "shop"
	rcfg.Serializers = serializers(t)
	sys, err := actor.NewSystem(actor.SystemConfig{Name: "shop",
		Extensions: []actor.ExtensionInstaller{remote.Install(rcfg), cluster.Install(ccfg)}})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			require.ErrorIs(t, err, cluster.ErrShuttingDown)
			require.NotErrorIs(t, ctx.Err(), context.DeadlineExceeded, "the system's shutdown ran out of time")
		}
	})
	return node{sys: sys, c: cluster.Get(sys)}
}
