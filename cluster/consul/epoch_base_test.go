package consul

import (
	"math"
	"strconv"
	"testing"

	"github.com/hashicorp/consul/api"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/internal/testconsul"
)

// putEpochBase writes value at the cluster's epoch base key, as another
// writer of the same Consul (an operator, a script) would, and returns the
// key's ModifyIndex.
func putEpochBase(t *testing.T, client *api.Client, ks keyspace, value string) uint64 {
	t.Helper()
	_, err := client.KV().Put(&api.KVPair{Key: ks.epochBase(), Value: []byte(value)}, nil)
	require.NoError(t, err)
	kv, _, err := client.KV().Get(ks.epochBase(), &api.QueryOptions{RequireConsistent: true})
	require.NoError(t, err)
	require.NotNil(t, kv)
	return kv.ModifyIndex
}

// An epoch base that is not a number, written over one that was, reads as
// no base: the epoch goes back, and the watcher must be able to raise the
// base over the bad record. Before, its check-and-set expected no record at
// all, failed on every view, and the watcher delivered no view again
// (without reporting the view stale).
func TestConsulMalformedEpochBaseDoesNotStopViews(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	client := apiClient(t, agent)
	ks := newKeyspace(cfg.KeyPrefix, cfg.Cluster)
	p := newProvider(t, cfg)
	a := joinMember(t, p, testMember("a", 1))
	first := waitView(t, a, "a", hasMembers("a#1"))

	idx := putEpochBase(t, client, ks, "1000")
	raised := waitView(t, a, "the base seen", func(top cluster.Topology) bool { return top.Epoch >= idx+1000 })
	require.Greater(t, raised.Epoch, first.Epoch)

	putEpochBase(t, client, ks, "not a number")
	b := joinMember(t, p, testMember("b", 1))
	top := waitView(t, a, "b joined after the bad base", hasMembers("a#1", "b#1"))
	require.Greater(t, top.Epoch, raised.Epoch, "epochs keep growing")
	waitView(t, b, "b sees itself", hasMembers("a#1", "b#1"))
}

// An epoch base so large that index + base overflows makes the epoch wrap
// to a small number. It is a bad record, not a base: before, the watcher
// took the wrapped epoch for a regression it could not repair (the base it
// read was already above any value it would write) and delivered no view
// again.
func TestConsulOverflowingEpochBaseDoesNotStopViews(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	client := apiClient(t, agent)
	ks := newKeyspace(cfg.KeyPrefix, cfg.Cluster)
	p := newProvider(t, cfg)
	a := joinMember(t, p, testMember("a", 1))
	waitView(t, a, "a", hasMembers("a#1"))

	idx := putEpochBase(t, client, ks, "1000")
	raised := waitView(t, a, "the base seen", func(top cluster.Topology) bool { return top.Epoch >= idx+1000 })

	// index + base wraps to the index minus 2: below every epoch delivered.
	putEpochBase(t, client, ks, strconv.FormatUint(math.MaxUint64-1, 10))
	b := joinMember(t, p, testMember("b", 1))
	top := waitView(t, a, "b joined after the huge base", hasMembers("a#1", "b#1"))
	require.Greater(t, top.Epoch, raised.Epoch, "epochs keep growing")
	require.Less(t, top.Epoch, uint64(math.MaxUint64/2), "the huge base is not added")
	waitView(t, b, "b sees itself", hasMembers("a#1", "b#1"))
}
