package main

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/examples/cluster/accountpb"
)

// failingLoads is an accountStore whose first loads fail, as a Consul KV
// store does while the agent is unreachable.
type failingLoads struct {
	accountStore
	fail atomic.Int32
}

func (s *failingLoads) load(id string, tok cluster.FencingToken) (accountState, error) {
	if s.fail.Add(-1) >= 0 {
		return accountState{}, errContention
	}
	return s.accountStore.load(id, tok)
}

// An activation whose load failed knows nothing of its account. Its audit
// answered balance 0 and an empty ledger, which the check reads as every
// acknowledged request lost; it now fails and passivates, and the audit
// asks again, reaching an activation that loaded the account.
// GetBalance answered 0 there as well, acknowledged.
func TestAuditSkipsActivationWhoseLoadFailed(t *testing.T) {
	mem := newStore()
	tok := cluster.FencingToken{Epoch: 1, Seq: 1}
	_, err := mem.load("acct-1", tok)
	require.NoError(t, err)
	require.NoError(t, mem.commit("acct-1", tok, "r1", 10, true))
	require.NoError(t, mem.commit("acct-2", tok, "r2", 5, true))
	st := &failingLoads{accountStore: mem}
	st.fail.Store(1)

	reg, err := cluster.NewMemoryRegistry(demoRegistry)
	require.NoError(t, err)
	defer reg.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	m, err := startMember(context.Background(), "m1", reg, false, st, log)
	require.NoError(t, err)
	defer func() { require.NoError(t, m.shutdown(context.Background())) }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, awaitView(ctx, []*member{m}, 1))

	ledgers, err := audit(ctx, m.c, []string{"acct-1"})
	require.NoError(t, err)
	require.Equal(t, int64(10), ledgers["acct-1"].Balance)
	require.Equal(t, map[string]int64{"r1": 10}, ledgers["acct-1"].Applied)
	require.Less(t, st.fail.Load(), int32(0), "the failing load happened")

	// A balance read from such an activation is an error too, not a
	// balance of 0 acknowledged.
	st.fail.Store(1)
	res, err := accountpb.NewAccountClient(m.c, "acct-2").GetBalance(ctx, &accountpb.BalanceRequest{})
	require.NoError(t, err)
	require.NotEmpty(t, res.Err)
	require.False(t, res.Applied)
}
