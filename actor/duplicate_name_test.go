package actor_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// A spawn under a taken name is refused before its Props' producer runs:
// no actor instance is made, with whatever its producer does, for an actor
// that never exists. Before, the producer ran first and the collision was
// found after it. At the root and for a child's name alike.
func TestDuplicateNameRunsNoProducer(t *testing.T) {
	sys, err := actor.NewSystem(actor.SystemConfig{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, sys.Shutdown(context.Background())) })
	var made atomic.Int32
	props := actor.PropsFromProducer(func() actor.Actor {
		made.Add(1)
		return actor.ReceiveFunc(func(actor.Context) {})
	})
	first, err := sys.Root().SpawnNamed(props, "once")
	require.NoError(t, err)
	require.EqualValues(t, 1, made.Load())
	_, err = sys.Root().SpawnNamed(props, "once")
	require.ErrorIs(t, err, actor.ErrNameExists)
	assert.EqualValues(t, 1, made.Load(), "the producer ran for a refused name")

	res := make(chan error, 1)
	parent := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if c.Message() != "go" {
			return
		}
		if _, err := c.SpawnNamed(props, "child"); err != nil {
			res <- err
			return
		}
		_, err := c.SpawnNamed(props, "child")
		res <- err
	}))
	sys.Root().Send(parent, "go")
	require.ErrorIs(t, <-res, actor.ErrNameExists)
	assert.EqualValues(t, 2, made.Load(), "the producer ran for a refused child's name")

	// The name's first actor is there as before, and its name is free
	// again once it has stopped.
	require.NoError(t, sys.Root().StopFuture(first).Wait())
	_, err = sys.Root().SpawnNamed(props, "once")
	require.NoError(t, err)
	assert.EqualValues(t, 3, made.Load())
}
