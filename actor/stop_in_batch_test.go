package actor_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/scheduler/middleware"
)

// An actor that stops while handling a user message (a PoisonPill, with no
// children to wait for) has closed its mailbox by the time its batch goes
// on: from then on a poster that queued before the close and finds the
// mailbox closed after drains it on its own goroutine (mailbox.Close), so
// the rest of the batch must not read the queues again. Before, run went on
// to drainSystem, which popped the system queue first and looked at the
// state after: a second consumer of the queue beside the poster's drain,
// which the race detector reported in TestDashboardInBrowser (a placement
// actor's Stop to a grain whose own batch had just stopped it) and which
// could hand one system message to both. The race needs a post that reads
// the mailbox open and queues just as the batch closes it, so the test
// makes many, at each of many actors while a worker poisons them: system
// posts (a harmless Unwatch), and user posts to an actor with kind
// middleware, after whose batch InvokeBatch reads the user queue's length.
func TestStopInBatchLeavesClosedMailboxToPosters(t *testing.T) {
	nobody := actor.NewPID(actor.LocalAddress, "nobody")
	for _, tc := range []struct {
		name string
		cfg  actor.SystemConfig
		post func(sys *actor.System, pid *actor.PID)
	}{
		{"system posts", actor.SystemConfig{}, func(sys *actor.System, pid *actor.PID) {
			sys.SendSystem(pid, &actor.Unwatch{Watcher: nobody})
		}},
		{"user posts with kind middleware", actor.SystemConfig{KindMiddleware: middleware.KindTelemetry()},
			func(sys *actor.System, pid *actor.PID) { sys.Root().Send(pid, "late") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sys, err := actor.NewSystem(tc.cfg)
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, sys.Shutdown(context.Background())) })
			for range 100 {
				pid := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
				stopped := sys.Root().PoisonFuture(pid)
				var posters sync.WaitGroup
				for range 2 {
					posters.Go(func() {
						for {
							select {
							case <-stopped.Done():
								return
							default:
								tc.post(sys, pid)
							}
						}
					})
				}
				_, err := stopped.Result()
				require.NoError(t, err)
				posters.Wait()
			}
		})
	}
}
