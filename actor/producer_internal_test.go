package actor

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type kindProbe struct{}

func (kindProbe) Receive(Context) {}

// The Props' cached kind metrics are never those of a stand-in for an
// actor whose producer panicked: the Props' next actors are counted under
// their own type's kind, not "*actor.startFailure".
func TestProducerPanicDoesNotCacheKind(t *testing.T) {
	sys, err := NewSystem(SystemConfig{})
	require.NoError(t, err)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, sys.Shutdown(ctx))
	}()
	var made atomic.Bool
	props := PropsFromProducer(func() Actor {
		if !made.Swap(true) {
			panic("first one fails")
		}
		return kindProbe{}
	})
	failed, err := sys.Root().SpawnNamed(props, "failed")
	require.NoError(t, err)
	ok, err := sys.Root().SpawnNamed(props, "ok")
	require.NoError(t, err)
	require.Same(t, sys.metrics.kind("*actor.startFailure"), failed.local.Load().km)
	require.Same(t, sys.metrics.kind("actor.kindProbe"), ok.local.Load().km)
}
