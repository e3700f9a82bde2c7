package actor_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// A spawn whose producer runs past a whole Shutdown (it blocks until the
// system has shut down) is refused with ErrSystemStopped, and the
// would-be actor leaves nothing behind: it is out of the registry when
// the spawn returns. Before, it stopped itself through its mailbox, which
// it handed to the pool after Shutdown had closed it: the pool dropped
// it, so the actor stayed registered for good (ProcessCount 1 after
// Shutdown) and what was sent to its PID waited in its mailbox, neither
// delivered nor dead-lettered.
func TestSpawnProducerPastShutdownLeavesNothing(t *testing.T) {
	for _, name := range []string{"named", ""} {
		t.Run("name="+name, func(t *testing.T) {
			sys, err := actor.NewSystem(actor.SystemConfig{Workers: 2})
			require.NoError(t, err)
			inside, release := make(chan struct{}), make(chan struct{})
			props := actor.PropsFromProducer(func() actor.Actor {
				close(inside)
				<-release
				return actor.ReceiveFunc(func(actor.Context) {})
			})
			type result struct {
				pid *actor.PID
				err error
			}
			done := make(chan result, 1)
			go func() {
				pid, err := sys.Root().SpawnNamed(props, name)
				done <- result{pid, err}
			}()
			<-inside
			require.NoError(t, sys.Shutdown(context.Background()))
			close(release)
			r := <-done
			require.ErrorIs(t, r.err, actor.ErrSystemStopped)
			require.Zero(t, sys.ProcessCount(), "the refused actor is still registered")
		})
	}
}
