package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/internal/testconsul"
)

// The demo against a real Consul agent. --consul: the members of one process
// meet through Consul. --join: two "processes" (two runs in this test,
// sharing nothing but the agent) meet through Consul, call the same
// accounts, keep them in Consul's KV store, and each one's check holds for
// the requests it sent.
func TestDemoWithConsul(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo for 16 s and two demo processes for 16 s against a Consul agent")
	}
	agent := testconsul.Start(t)
	t.Run("members", func(t *testing.T) {
		var out bytes.Buffer
		// Longer than the wait-out (12 s) before the first activation:
		// with 6 s every request timed out and the check, with nothing
		// acknowledged, still passed (TestCheckFailsWithNothingAcknowledged).
		o := options{members: 2, consul: agent.Address(), duration: 16 * time.Second, grains: 20, callers: 2}
		code := run(context.Background(), o, &out)
		t.Log(out.String())
		require.Equal(t, 0, code)
		s := out.String()
		require.Contains(t, s, "starting 2 member(s), Consul at "+agent.Address())
		require.Contains(t, s, "wait-out, 12s")
		require.Contains(t, s, "consistency check: sum of balances")
		require.True(t, strings.HasSuffix(strings.TrimSpace(s), ": OK"))
	})
	t.Run("join", func(t *testing.T) { testJoin(t, agent) })
}

func testJoin(t *testing.T, agent *testconsul.Agent) {
	var wg sync.WaitGroup
	outs := make([]bytes.Buffer, 2)
	codes := make([]int, 2)
	for i := range 2 {
		wg.Go(func() {
			o := options{members: 1, join: true, consul: agent.Address(), duration: 16 * time.Second, grains: 20, callers: 2}
			codes[i] = run(context.Background(), o, &outs[i])
		})
	}
	wg.Wait()
	for i := range 2 {
		s := outs[i].String()
		t.Logf("process %d:\n%s", i, s)
		require.Equal(t, 0, codes[i])
		require.Contains(t, s, "consistency check: sum of this process's ledger entries")
		require.True(t, strings.HasSuffix(strings.TrimSpace(s), ": OK"))
		require.Regexp(t, `activations \S+=\d+`, s)
		require.Regexp(t, `ledger entries of this run folded into the balances in Consul: [1-9]\d*\n`, s)
	}
	// The ledgers stay in Consul across runs; each run's entries go once
	// its check is done, so they do not grow with every run.
	pairs, _, err := apiClient(t, agent).KV().List("fraktor-demo/"+clusterName+"/accounts/", &api.QueryOptions{RequireConsistent: true})
	require.NoError(t, err)
	require.NotEmpty(t, pairs)
	entries := 0
	for _, p := range pairs {
		var rec kvRecord
		require.NoError(t, json.Unmarshal(p.Value, &rec), p.Key)
		entries += len(rec.Applied) + len(rec.Refused)
		if len(rec.Applied) == 0 {
			require.Equal(t, rec.Balance, rec.Carried, "%s: the balance is what the runs carried", p.Key)
		}
	}
	// Before, every request of every run stayed: about 3,300 entries after
	// these two runs.
	require.Zero(t, entries, "ledger entries left in Consul by finished runs")
}

func apiClient(t *testing.T, agent *testconsul.Agent) *api.Client {
	t.Helper()
	cfg := agent.APIConfig()
	c, err := api.NewClient(&cfg)
	require.NoError(t, err)
	t.Cleanup(cfg.HttpClient.CloseIdleConnections)
	return c
}
