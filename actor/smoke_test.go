package actor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

type ping struct{ n int }
type pong struct{ n int }

func TestSmokeRequest(t *testing.T) {
	sys, err := actor.NewSystem(actor.SystemConfig{})
	require.NoError(t, err)
	defer func() { require.NoError(t, sys.Shutdown(context.Background())) }()
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if p, ok := c.Message().(*ping); ok {
			c.Respond(&pong{n: p.n + 1})
		}
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i := 0; i < 1000; i++ {
		r, err := actor.Request[*pong](ctx, sys.Root(), pid, &ping{n: i})
		require.NoError(t, err)
		require.Equal(t, i+1, r.n)
	}
}
