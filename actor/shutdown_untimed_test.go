package actor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// A request without a timeout (RequestFuture with timeout 0, Request with a
// context that never ends) whose waiter is still blocked when the system
// shuts down fails with ErrSystemStopped, as RequestFuture documents: no
// answer can come any more. Before, only a request with a timeout had a node in
// the timer queue, whose close fails it; one without waited for good, and
// so did the goroutine blocked on it.
func TestUntimedRequestFailsAtShutdown(t *testing.T) {
	for _, tc := range []struct {
		name string
		wait func(sys *actor.System, pid *actor.PID) error
	}{
		{"RequestFuture_Result", func(sys *actor.System, pid *actor.PID) error {
			f := sys.Root().RequestFuture(pid, "never answered", 0)
			_, err := f.Result()
			return err
		}},
		{"RequestFuture_Wait", func(sys *actor.System, pid *actor.PID) error {
			return sys.Root().RequestFuture(pid, "never answered", 0).Wait()
		}},
		{"RequestFuture_ResultContext", func(sys *actor.System, pid *actor.PID) error {
			f := sys.Root().RequestFuture(pid, "never answered", 0)
			_, err := f.ResultContext(context.Background())
			return err
		}},
		{"Request_root", func(sys *actor.System, pid *actor.PID) error {
			_, err := actor.Request[string](context.Background(), sys.Root(), pid, "never answered")
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sys, err := actor.NewSystem(actor.SystemConfig{})
			require.NoError(t, err)
			got := make(chan struct{})
			pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
				if _, ok := c.Message().(string); ok {
					close(got) // handled, never answered
				}
			}))
			res := make(chan error, 1)
			go func() { res <- tc.wait(sys, pid) }()
			<-got
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			require.NoError(t, sys.Shutdown(ctx))
			select {
			case err := <-res:
				require.ErrorIs(t, err, actor.ErrSystemStopped)
			case <-ctx.Done():
				t.Fatal("the waiter still waits after Shutdown")
			}
		})
	}
}
