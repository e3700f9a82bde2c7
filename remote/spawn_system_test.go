package remote_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// TestRemoteSpawn: spawning a registered kind by name on another node, and
// each way it can fail, with a typed error.
func TestRemoteSpawn(t *testing.T) {
	cfgA := testConfig(t)
	cfgA.GiveUpAfter = 300 * time.Millisecond
	cfgA.Kinds = map[string]*actor.Props{"echo": echoProps("a")}
	sysA, ra := startSystem(t, "a", cfgA)
	cfgB := testConfig(t)
	cfgB.Kinds = map[string]*actor.Props{"echo": echoProps("b")}
	_, rb := startSystem(t, "b", cfgB)

	t.Run("named", func(t *testing.T) {
		pid, err := ra.SpawnNamed(ctxWait(t), rb.Address(), "e1", "echo")
		require.NoError(t, err)
		assert.Equal(t, rb.Address(), pid.Address)
		assert.Equal(t, "e1", pid.ID)
		rep, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), pid, &Echo{Text: "spawned"})
		require.NoError(t, err)
		assert.Equal(t, &EchoReply{Text: "spawned", By: "b"}, rep)
	})
	t.Run("generated name", func(t *testing.T) {
		pid, err := ra.SpawnNamed(ctxWait(t), rb.Address(), "", "echo")
		require.NoError(t, err)
		assert.NotEmpty(t, pid.ID)
		_, err = actor.Request[*EchoReply](ctxWait(t), sysA.Root(), pid, &Echo{})
		require.NoError(t, err)
	})
	t.Run("name taken", func(t *testing.T) {
		_, err := ra.SpawnNamed(ctxWait(t), rb.Address(), "e1", "echo")
		require.ErrorIs(t, err, actor.ErrNameExists)
	})
	t.Run("unknown kind", func(t *testing.T) {
		_, err := ra.SpawnNamed(ctxWait(t), rb.Address(), "", "nope")
		require.ErrorIs(t, err, remote.ErrUnknownKind)
		assert.Contains(t, err.Error(), "nope")
	})
	t.Run("bad arguments", func(t *testing.T) {
		_, err := ra.SpawnNamed(ctxWait(t), rb.Address(), "", "")
		require.ErrorIs(t, err, remote.ErrSpawnFailed)
		_, err = ra.SpawnNamed(ctxWait(t), rb.Address(), strings.Repeat("n", 5000), "echo")
		require.ErrorIs(t, err, remote.ErrSpawnFailed)
	})
	t.Run("unreachable", func(t *testing.T) {
		_, err := ra.SpawnNamed(ctxWait(t), closedAddress(t), "", "echo")
		require.ErrorIs(t, err, remote.ErrPeerUnreachable)
	})
	t.Run("context ends first", func(t *testing.T) {
		cfg := testConfig(t) // GiveUpAfter 10 s
		_, rc := startSystem(t, "c", cfg)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := rc.SpawnNamed(ctx, closedAddress(t), "", "echo")
		require.ErrorIs(t, err, actor.ErrTimeout)
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
	t.Run("own address spawns locally", func(t *testing.T) {
		pid, err := ra.SpawnNamed(ctxWait(t), ra.Address(), "local-echo", "echo")
		require.NoError(t, err)
		rep, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), pid, &Echo{})
		require.NoError(t, err)
		assert.Equal(t, "a", rep.By)
		_, err = ra.SpawnNamed(ctxWait(t), ra.Address(), "", "nope")
		require.ErrorIs(t, err, remote.ErrUnknownKind)
	})
}
