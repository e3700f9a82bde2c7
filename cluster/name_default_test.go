package cluster_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// An empty cluster Name is remote's SystemName: a member configured so
// joins and serves with members that name it; a Name that differs from
// remote's is refused at start.
func TestClusterNameDefaultsToRemoteSystemName(t *testing.T) {
	reg := newRegistry(t)
	named := startMember(t, reg, counterKind())
	unnamed := startMemberWith(t, reg, func(c *cluster.Config) { c.Name = "" }, counterKind())
	awaitMembers(t, 2, named, unnamed)
	ctx := ctxWait(t)
	for _, id := range []string{"1", "2", "3", "4"} {
		_, err := cluster.Request[*Total](ctx, unnamed.c, cluster.NewIdentity("counter", id), &Add{N: 1})
		require.NoError(t, err)
	}

	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress = "127.0.0.1:0"
	sys, err := actor.NewSystem(actor.SystemConfig{Name: "other", Extensions: []actor.ExtensionInstaller{
		remote.Install(rcfg), cluster.Install(cluster.Config{Name: "other", Provider: reg}),
	}})
	if err == nil {
		_ = sys.Shutdown(context.Background())
	}
	require.True(t, errors.Is(err, cluster.ErrInvalidConfig), "Name differing from remote's SystemName: %v", err)
}
