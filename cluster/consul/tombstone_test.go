package consul

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/internal/testconsul"
)

// The index of a KV prefix is the highest ModifyIndex of its keys and of
// the tombstones of keys deleted under it, and the servers reap tombstones
// after 15 minutes (TombstoneTTL, not configurable from an agent's config):
// in a cluster where nothing was written since the last delete (here, a
// released marker past ReleasedRetention), the view index goes back without
// any snapshot restore. The watcher takes it as a regression: it emits
// MembershipEventEpochRegressed, raises the epoch base and goes on with
// growing epochs (docs/membership.md). It lasts about 16 minutes, so it
// runs only with FRAKTOR_CONSUL_TOMBSTONES=1.
func TestConsulTombstoneReapLowersTheIndex(t *testing.T) {
	if os.Getenv("FRAKTOR_CONSUL_TOMBSTONES") == "" {
		t.Skip("waits about 16 minutes for Consul's tombstone reaping; set FRAKTOR_CONSUL_TOMBSTONES=1")
	}
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	cfg.ReleasedRetention = time.Second
	p := newProvider(t, cfg)
	a := joinMember(t, p, testMember("a", 1))
	waitView(t, a, "a", hasMembers("a#1"))
	b := joinMember(t, p, testMember("b", 1))
	waitView(t, a, "b joined", hasMembers("a#1", "b#1"))
	require.NoError(t, b.Leave(context.Background()))
	waitView(t, a, "b left", hasMembers("a#1"))

	// The released marker is deleted once it is older than a second: the
	// last write under the prefix.
	client := apiClient(t, agent)
	root := newKeyspace(cfg.KeyPrefix, cfg.Cluster).root
	var top uint64
	for {
		pairs, meta, err := client.KV().List(root, &api.QueryOptions{WaitIndex: top, WaitTime: 5 * time.Second})
		require.NoError(t, err)
		top = meta.LastIndex
		released := false
		for _, kv := range pairs {
			released = released || strings.HasPrefix(kv.Key, root+"released/")
		}
		if !released {
			break
		}
	}
	last, _ := a.Latest()

	deadline := time.NewTimer(25 * time.Minute)
	defer deadline.Stop()
	regressed := false
	for {
		select {
		case ev := <-a.Events():
			if ev.Kind == cluster.MembershipEventEpochRegressed {
				regressed = true
			}
		case v := <-a.Snapshots():
			if regressed && v.Epoch > last.Epoch {
				t.Logf("regressed after the last delete (index %d); the next view has epoch %d > %d", top, v.Epoch, last.Epoch)
				require.Equal(t, []string{"a#1"}, memberKeys(v))
				return
			}
		case <-deadline.C:
			t.Fatalf("no regression within 25 minutes (regressed %v)", regressed)
		}
	}
}
