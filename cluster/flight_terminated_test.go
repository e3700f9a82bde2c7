package cluster

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// A resolution answered with a grain of another member that ended before
// the answer was published: the end's broadcast (ActivationTerminated)
// arrived while the flight was under way, so it found no PidCache entry to
// drop. The flight then must not publish that PID: the entry would lead to
// the dead grain for the PidCache TTL, and every Send to the identity from
// this member would be a dead letter until a request failed on it.
func TestFlightDoesNotPublishTerminatedPID(t *testing.T) {
	sys, err := actor.NewSystem(actor.SystemConfig{Name: "flight"})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, sys.Shutdown(ctx))
	})
	cache, err := NewPidCache(DefaultPidCacheConfig())
	require.NoError(t, err)
	c := &Cluster{sys: sys, root: sys.Root(), cache: cache, log: slog.New(slog.DiscardHandler)}
	id := NewIdentity("k", "x")
	dead := actor.NewPID("10.0.0.9:4000", "#1/k/x")

	f, lead, _ := c.flights.join(id, nil, c, c.now(), nil)
	require.True(t, lead)
	c.flights.terminated(id, dead.Address, dead.ID) // the broadcast, handled first
	c.land(id, f, actor.NewPID(dead.Address, dead.ID), "o#1", nil, false)
	require.Nil(t, c.cached(id, c.now()), "the ended grain's PID was published")
	require.NoError(t, f.err, "the flight's own callers still get its answer")
	require.Equal(t, dead.ID, f.pid.ID)

	// A broadcast about another PID, or none, leaves the answer published.
	live := actor.NewPID("10.0.0.8:4000", "#1/k/x")
	f, _, _ = c.flights.join(id, nil, c, c.now(), nil)
	c.flights.terminated(id, dead.Address, dead.ID)
	c.land(id, f, live, "p#1", nil, false)
	require.Same(t, live, c.cached(id, c.now()))
}
