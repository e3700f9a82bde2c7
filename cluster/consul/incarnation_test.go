package consul

import (
	"context"
	"testing"

	"github.com/hashicorp/consul/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/internal/testconsul"
)

// An incarnation that was registered is never registered again: not after
// a crash (where Consul's lock delay must not be what refuses it, nor be
// reported as reuse), not after a graceful leave whose released marker has
// expired, and not with a lower incarnation.
func TestConsulIncarnationNeverReused(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	cfg.ReleasedRetention = 1 // every released marker is stale at the next view
	p := newProvider(t, cfg)
	client := apiClient(t, agent)
	ks := newKeyspace(cfg.KeyPrefix, cfg.Cluster)
	a := joinMember(t, p, testMember("a", 1))

	t.Run("after a crash", func(t *testing.T) {
		b := joinMember(t, p, testMember("b", 1))
		waitView(t, a, "b joined", hasMembers("a#1", "b#1"))
		require.NoError(t, b.Stop(context.Background()))
		waitView(t, a, "b expired", hasMembers("a#1"))
		_, err := p.Join(context.Background(), testMember("b", 1))
		require.ErrorIs(t, err, cluster.ErrIncarnationReused)
		assert.NotContains(t, err.Error(), "lock delay", "refused by the lock delay, which expires")
	})
	t.Run("after a leave whose marker expired", func(t *testing.T) {
		c := joinMember(t, p, testMember("c", 1))
		waitView(t, a, "c joined", hasMembers("a#1", "c#1"))
		require.NoError(t, c.Leave(context.Background()))
		waitDeleted(t, client, ks.releasedKey(testMember("c", 1)))
		_, err := p.Join(context.Background(), testMember("c", 1))
		require.ErrorIs(t, err, cluster.ErrIncarnationReused)
	})
	t.Run("a lower incarnation", func(t *testing.T) {
		d := joinMember(t, p, testMember("d", 5))
		require.NoError(t, d.Leave(context.Background()))
		_, err := p.Join(context.Background(), testMember("d", 4))
		require.ErrorIs(t, err, cluster.ErrIncarnationReused)
		joinMember(t, p, testMember("d", 6))
	})
	t.Run("lock delay is its own error", func(t *testing.T) {
		// The servers set a lock delay on the keys of a session they
		// invalidate; with the incarnation record removed by hand, only
		// the lock delay stands in the way.
		e := joinMember(t, p, testMember("e", 1))
		_, err := client.Session().Destroy(e.(*membership).session, nil)
		require.NoError(t, err)
		_, err = client.KV().Delete(ks.incarnation("e"), nil)
		require.NoError(t, err)
		_, err = p.Join(context.Background(), testMember("e", 1))
		require.ErrorIs(t, err, ErrLockDelay)
		assert.NotErrorIs(t, err, cluster.ErrIncarnationReused)
	})
	t.Run("a malformed record refuses the ID", func(t *testing.T) {
		// Not a number (here written by hand with a newline): which
		// incarnations were registered is unknown, so none is let in
		// until an operator repairs or deletes the record.
		_, err := client.KV().Put(&api.KVPair{Key: ks.incarnation("f"), Value: []byte("5\n")}, nil)
		require.NoError(t, err)
		_, err = p.Join(context.Background(), testMember("f", 9))
		require.ErrorIs(t, err, ErrBadRecord)
		assert.Contains(t, err.Error(), ks.incarnation("f"))
		_, err = client.KV().Put(&api.KVPair{Key: ks.incarnation("f"), Value: []byte("5")}, nil)
		require.NoError(t, err)
		joinMember(t, p, testMember("f", 9))
	})
}

// waitDeleted blocks (on Consul's blocking queries) until key is gone.
func waitDeleted(t *testing.T, client *api.Client, key string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	var index uint64
	for {
		kv, meta, err := client.KV().Get(key, (&api.QueryOptions{WaitIndex: index, RequireConsistent: true}).WithContext(ctx))
		require.NoError(t, err, "waiting for %s to be deleted", key)
		if kv == nil {
			return
		}
		index = meta.LastIndex
	}
}
