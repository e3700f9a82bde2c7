package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// failingOwnerRequest asks counter identities from a until one fails
// within perCall (its owner is the member a cannot reach) and returns
// that error.
func failingOwnerRequest(t *testing.T, a node, perCall time.Duration) error {
	t.Helper()
	for i := range 64 {
		ctx, cancel := context.WithTimeout(context.Background(), perCall)
		_, err := cluster.Request[*Identity](ctx, a.c, cluster.NewIdentity("counter", fmt.Sprint(i)), &WhoAmI{})
		cancel()
		if err != nil {
			return err
		}
	}
	t.Fatal("no identity of the 64 was owned by the unreachable member")
	return nil
}

// A member of another cluster registered with the same provider (the
// misconfiguration ClusterNamer guards against for Consul): the caller's
// handshake is refused, and the timeout says so. Before, the caller read
// only "activation request to …: actor: timeout".
func TestRequestTimeoutNamesTheRefusedHandshake(t *testing.T) {
	reg := newRegistry(t)
	a := startMember(t, reg, counterKind())
	awaitMemberReady(t, a) // alone: the member that joins next is not an earlier owner
	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress = "127.0.0.1:0"
	rcfg.SystemName = "bank"
	rcfg.Serializers = serializers(t)
	testkit.NewPeerSystem(t, func(c *actor.SystemConfig) {
		c.Name = "bank"
		c.Extensions = []actor.ExtensionInstaller{
			remote.Install(rcfg),
			cluster.Install(cluster.Config{Name: "bank", Provider: reg, Kinds: []cluster.Kind{counterKind()}}),
		}
	})
	awaitMembers(t, 2, a)

	err := failingOwnerRequest(t, a, 2*time.Second)
	require.ErrorIs(t, err, cluster.ErrTimeout)
	require.ErrorIs(t, err, remote.ErrClusterMismatch, "the refused handshake is the cause: %v", err)
	require.ErrorContains(t, err, "handshake rejected by peer")
}

// A member whose process is gone while its lease runs: the dial fails,
// and the timeout names the dial's error.
func TestRequestTimeoutNamesTheFailedDial(t *testing.T) {
	reg := newRegistry(t)
	a := startMember(t, reg, counterKind())
	awaitMemberReady(t, a) // alone: the member that joins next is not an earlier owner
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := l.Addr().String()
	require.NoError(t, l.Close())
	m, err := reg.Join(context.Background(), cluster.Member{ID: "gone", Incarnation: 1, Address: dead, Kinds: []string{"counter"}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Stop(context.Background()) })
	awaitMembers(t, 2, a)

	err = failingOwnerRequest(t, a, 2*time.Second)
	require.ErrorIs(t, err, cluster.ErrTimeout)
	var opErr *net.OpError
	require.True(t, errors.As(err, &opErr), "the dial's error is the cause: %v", err)
	require.ErrorContains(t, err, "no connection to "+dead)
}
