package testconsul

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAgentStartsAndKeepsStateAcrossRestart checks what the cluster/consul
// tests rely on: a leader at once, sessions work (the node is registered),
// and keys survive Restart on the same address.
func TestAgentStartsAndKeepsStateAcrossRestart(t *testing.T) {
	a := Start(t)
	cfg := a.APIConfig()
	client, err := api.NewClient(&cfg)
	require.NoError(t, err)
	leader, err := client.Status().Leader()
	require.NoError(t, err)
	assert.NotEmpty(t, leader)
	id, _, err := client.Session().CreateNoChecks(&api.SessionEntry{TTL: "1s", Behavior: api.SessionBehaviorDelete}, nil)
	require.NoError(t, err, "session_ttl_min must allow 1s")
	_, err = client.KV().Put(&api.KVPair{Key: "fraktor/test", Value: []byte("v")}, nil)
	require.NoError(t, err)

	a.Stop()
	_, err = client.KV().Put(&api.KVPair{Key: "fraktor/test", Value: []byte("w")}, nil)
	require.Error(t, err, "a stopped agent must not answer")

	a.Restart()
	kv, _, err := client.KV().Get("fraktor/test", nil)
	require.NoError(t, err)
	require.NotNil(t, kv)
	assert.Equal(t, "v", string(kv.Value))
	_, _, err = client.Session().Renew(id, nil)
	require.NoError(t, err)
	assert.Contains(t, a.Logs(), "Synced node info")
}

func TestBinaryOverride(t *testing.T) {
	t.Setenv(EnvBinary, "/nonexistent/consul")
	_, err := Binary()
	require.ErrorContains(t, err, "/nonexistent/consul")
	t.Setenv(EnvBinary, "")
	p, err := Binary()
	require.NoError(t, err, "build the agent with `make consul`")
	assert.FileExists(t, p)
}

// Pause freezes the agent (requests time out, nothing is lost), Resume
// answers again, Kill ends it without a graceful shutdown and Restart
// brings it back with its state.
func TestAgentPauseResumeKill(t *testing.T) {
	a := Start(t)
	cfg := a.APIConfig()
	client, err := api.NewClient(&cfg)
	require.NoError(t, err)
	t.Cleanup(cfg.HttpClient.CloseIdleConnections)
	_, err = client.KV().Put(&api.KVPair{Key: "fraktor/test", Value: []byte("v")}, nil)
	require.NoError(t, err)

	a.Pause()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, _, err = client.KV().Get("fraktor/test", (&api.QueryOptions{}).WithContext(ctx))
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded, "a paused agent must not answer")
	a.Resume()
	kv, _, err := client.KV().Get("fraktor/test", nil)
	require.NoError(t, err)
	require.NotNil(t, kv)

	a.Kill()
	_, _, err = client.KV().Get("fraktor/test", nil)
	require.Error(t, err, "a killed agent must not answer")
	a.Restart()
	kv, _, err = client.KV().Get("fraktor/test", &api.QueryOptions{RequireConsistent: true})
	require.NoError(t, err)
	require.NotNil(t, kv)
	assert.Equal(t, "v", string(kv.Value))

	a.Pause() // cleanup stops a paused agent too
}
