package clusterbench

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// TestClusterWorkloads runs every workload of both implementations at a
// tiny size and checks the counts, so a benchmark that silently loses
// requests fails here.
func TestClusterWorkloads(t *testing.T) {
	for _, impl := range impls {
		t.Run(impl, func(t *testing.T) {
			if impl == ImplProto && raceEnabled {
				// Three protoactor-go remotes in one process race in
				// protoactor-go itself (remote.Start sets gRPC's global
				// logger while the other members' servers read it;
				// MemberList.UpdateClusterTopology): run without -race.
				t.Skip("protoactor-go's cluster is not race-free in one process")
			}
			c := startCluster(t, impl, Options{PidCacheCapacity: 4096})
			ctx := callCtx(t)
			require.Equal(t, 3, c.Members())

			id, err := IdentityOwnedBy(c, 0, 1, "warm")
			require.NoError(t, err)
			owner, err := c.Owner(2, id)
			require.NoError(t, err)
			assert.Equal(t, 1, owner, "members agree on the owner")
			msg := payload()
			lat := make([]time.Duration, 20)
			require.NoError(t, RoundTrips(ctx, lat, func(ctx context.Context) error { return c.Request(ctx, 0, id, msg) }))
			require.NoError(t, RoundTrips(ctx, lat, func(ctx context.Context) error { return c.RemoteRequest(ctx, 0, 1, msg) }))
			for i, d := range lat {
				assert.Positive(t, d, "round trip %d", i)
			}

			for _, local := range []bool{true, false} {
				ids, err := ColdIdentities(c, 0, local, "cold", 5)
				require.NoError(t, err)
				for _, id := range ids {
					owner, err := c.Owner(0, id)
					require.NoError(t, err)
					assert.Equal(t, local, owner == 0, "owner of %s", id)
				}
				cold := make([]time.Duration, len(ids))
				require.NoError(t, Cold(ctx, c, 0, ids, cold))
				for i, d := range cold {
					assert.Positive(t, d, "cold %d (local %v)", i, local)
				}
			}

			got, err := Throughput(ctx, c, Identities("tp", 50), 2, 300)
			require.NoError(t, err)
			assert.Equal(t, 300, got)
		})
	}
}

// IdleBytes runs and its grains hold memory. The figure IdleBytes returns
// compares the heap before and after the grains; a cluster closed just
// before (the same test run again in one process) may free some of its
// heap in between, and then the figure read negative now and then. So the
// check takes as its baseline the lower of the heap before the grains and
// after this cluster is closed.
func TestIdleBytes(t *testing.T) {
	const n = 1000
	c, err := Start(ImplFraktor, Options{Members: 1, PidCacheCapacity: 2048})
	require.NoError(t, err)
	before := heapInUse()
	_, err = IdleBytes(callCtx(t), c, Identities("idle", n), 4)
	require.NoError(t, err)
	after := heapInUse()
	ctx, cancel := context.WithTimeout(context.Background(), readyLimit)
	defer cancel()
	require.NoError(t, c.Close(ctx))
	end := heapInUse()
	base := min(before, end)
	require.Greater(t, after, base, "heap with %d idle grains: before %d, with them %d, after close %d", n, before, after, end)
}

func TestBadInput(t *testing.T) {
	_, err := Start("akka", Options{})
	require.ErrorIs(t, err, ErrUnknownImpl)
	ctx := context.Background()
	require.ErrorIs(t, RoundTrips(ctx, nil, nil), ErrBadSize)
	require.ErrorIs(t, Cold(ctx, nil, 0, nil, nil), ErrBadSize)
	require.ErrorIs(t, Cold(ctx, nil, 0, []string{"a", "b"}, make([]time.Duration, 1)), ErrBadSize)
	_, err = ColdIdentities(nil, 0, true, "x", 0)
	require.ErrorIs(t, err, ErrBadSize)
	_, err = Throughput(ctx, nil, nil, 1, 1)
	require.ErrorIs(t, err, ErrBadSize)
}

// countingCluster answers every call at once and counts what Cold and
// ColdIdentities ask of it.
type countingCluster struct{ owners, requests int }

func (c *countingCluster) Members() int { return 3 }

func (c *countingCluster) Request(context.Context, int, string, *wrapperspb.BytesValue) error {
	c.requests++
	return nil
}

func (c *countingCluster) RemoteRequest(context.Context, int, int, *wrapperspb.BytesValue) error {
	return nil
}

func (c *countingCluster) Owner(_ int, id string) (int, error) {
	c.owners++
	return int(id[len(id)-1]-'0') % 3, nil // by the last digit
}

func (c *countingCluster) Close(context.Context) error { return nil }

// The cold benchmark's timed region is the activations alone: Cold makes
// one request per identity and no owner computation (the harness's
// Owner cost protoactor-go's side about three times fraktor-go's, and it
// was timed once per candidate identity).
func TestColdTimesRequestsOnly(t *testing.T) {
	c := &countingCluster{}
	ids, err := ColdIdentities(c, 0, true, "cold", 10)
	require.NoError(t, err)
	require.Len(t, ids, 10)
	for _, id := range ids {
		assert.Zero(t, int(id[len(id)-1]-'0')%3, "%s is owned by member 0", id)
	}
	assert.Greater(t, c.owners, 10, "candidates owned elsewhere were skipped")
	*c = countingCluster{}
	require.NoError(t, Cold(context.Background(), c, 0, ids, make([]time.Duration, len(ids))))
	assert.Zero(t, c.owners, "owner computations inside Cold")
	assert.Equal(t, len(ids), c.requests)
}
