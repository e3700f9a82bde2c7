package consul

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/internal/testconsul"
)

// oddIDs are member IDs whose escaped form is a dot segment or holds
// characters that URLs treat specially. The KV keys are path-escaped IDs,
// and "." and ".." stay as they are: a key sent in a request's URL path
// (/v1/kv/<key>) is cleaned by the agent's HTTP router (…/members/./1
// becomes …/members/1), so requests naming these keys reach other keys.
var oddIDs = []string{".", "..", "a/b", "50%"}

// Evict removes a member whatever its ID. Before, the lookup of the member
// key went through the URL path: for "." and ".." it found no key, and
// Evict returned nil without evicting.
func TestConsulEvictOddIDs(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	p := newProvider(t, cfg)
	a := joinMember(t, p, testMember("a", 1))
	for i, id := range oddIDs {
		t.Run(id, func(t *testing.T) {
			m := joinMember(t, p, testMember(id, uint64(i+1)))
			waitView(t, a, "joined", func(top cluster.Topology) bool { return hasMemberKey(top, m.Self().Key()) })
			require.NoError(t, p.Evict(context.Background(), m.Self()))
			waitEvent(t, m, cluster.MembershipEventLeaseRevoked)
			waitView(t, a, "evicted", hasMembers("a#1"))
		})
	}
}

// Released markers past ReleasedRetention are deleted whatever the ID.
// Before, the delete went through the URL path, and the markers of "."
// and ".." stayed for good.
func TestConsulStaleReleasedMarkersOfOddIDsDeleted(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	cfg.ReleasedRetention = time.Nanosecond
	p := newProvider(t, cfg)
	client := apiClient(t, agent)
	ks := newKeyspace(cfg.KeyPrefix, cfg.Cluster)
	a := joinMember(t, p, testMember("a", 1))
	for i, id := range oddIDs {
		m := joinMember(t, p, testMember(id, uint64(i+1)))
		waitView(t, a, "joined "+id, func(top cluster.Topology) bool { return hasMemberKey(top, m.Self().Key()) })
		require.NoError(t, m.Leave(context.Background()))
	}
	// Each view deletes the markers older than the retention; the
	// deletions end the blocking queries below.
	var index uint64
	deadline := time.Now().Add(waitLimit)
	for {
		pairs, meta, err := client.KV().List(ks.released(), &api.QueryOptions{WaitIndex: index, WaitTime: time.Second, RequireConsistent: true})
		require.NoError(t, err)
		var left []string
		for _, p := range pairs {
			left = append(left, strings.TrimPrefix(p.Key, ks.released()))
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("released markers never deleted: %q", left)
		}
		index = meta.LastIndex
	}
}

func hasMemberKey(top cluster.Topology, key string) bool {
	for _, m := range top.Members {
		if m.Key() == key {
			return true
		}
	}
	return false
}
