package consul

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// A cluster whose name differs from the Consul provider's Cluster is
// refused at install, before it joins: two clusters that kept the
// provider's default name on one agent saw each other's members, and calls
// to grains owned by the other cluster's members timed out without saying
// why. No agent is needed: the refusal comes before Join.
func TestInstallRefusesProviderOfAnotherClusterName(t *testing.T) {
	p, err := New(DefaultConfig()) // Cluster "fraktor"
	require.NoError(t, err)
	require.Equal(t, "fraktor", p.ClusterName())

	// Config.Name empty: remote's SystemName "staging" is the cluster's
	// name, so Validate cannot tell and Install refuses.
	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress, rcfg.SystemName = "127.0.0.1:0", "staging"
	sys, err := actor.NewSystem(actor.SystemConfig{Name: "staging", Extensions: []actor.ExtensionInstaller{
		remote.Install(rcfg), cluster.Install(cluster.Config{Provider: p}),
	}})
	if err == nil {
		_ = sys.Shutdown(context.Background())
	}
	require.ErrorIs(t, err, cluster.ErrInvalidConfig)
	for _, want := range []string{`"staging"`, `"fraktor"`, "Config.Cluster"} {
		require.ErrorContains(t, err, want)
	}

	// Config.Name given: Validate refuses already.
	err = cluster.Config{Name: "prod", Provider: p}.Validate()
	require.ErrorIs(t, err, cluster.ErrInvalidConfig)
	require.ErrorContains(t, err, `Name "prod" differs from the Provider's cluster name "fraktor"`)

	// The fix the message names: the provider's Cluster set to the name.
	cfg := DefaultConfig()
	cfg.Cluster = "prod"
	p, err = New(cfg)
	require.NoError(t, err)
	require.NoError(t, cluster.Config{Name: "prod", Provider: p}.Validate())
}
