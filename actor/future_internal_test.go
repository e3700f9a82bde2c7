package actor

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// PipeTo racing with the completion: whichever wins, the pipe delivers the
// answer, never a half-written result (the race detector checks the
// memory order; the value check catches a nil read without it).
func TestFuturePipeToRacesCompletion(t *testing.T) {
	sys, err := NewSystem(SystemConfig{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, sys.Shutdown(context.Background())) })
	for i := 0; i < 2000; i++ {
		f := sys.newFuture(nil, 0)
		target := sys.newFuture(nil, 0)
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Go(func() { <-start; f.complete("answer", nil) })
		wg.Go(func() { <-start; f.PipeTo(target.PID()) })
		close(start)
		wg.Wait()
		v, err := target.Result()
		require.NoError(t, err)
		require.Equal(t, "answer", v, "round %d", i)
	}
}
