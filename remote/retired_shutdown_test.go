package remote

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/scheduler"
)

// TestCloseWaitsForRetiredDeadline: a retired watcher's deadline that has
// come reports the peer terminated on the clock's goroutine; a Close that
// begins meanwhile returns only once that report (the PeerTerminated hook,
// which ends the peer's watches) has returned. Before, the report was no
// goroutine of the Node's: Close returned while it still ran, and the hook
// could act on the system after its shutdown. synctest makes "Close has
// done all it could" an event.
func TestCloseWaitsForRetiredDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.ListenAddress = "node-b:1"
		clock := scheduler.NewManualClock(time.Now())
		entered, release := make(chan struct{}), make(chan struct{})
		rec := newRecorder()
		hooks := rec.hooks()
		hooks.PeerTerminated = func(Peer, error) {
			close(entered)
			<-release
		}
		n, err := NewNode(cfg, hooks, WithTransport(NewMemoryNetwork()), WithClock(clock))
		require.NoError(t, err)
		require.NoError(t, n.Start(context.Background()))
		n.mu.Lock()
		n.retire(&endpoint{addr: "node-a:1", peer: "node-a"}, true)
		n.mu.Unlock()

		released := false
		defer func() {
			if !released {
				close(release) // a failed check: let the hook end
			}
		}()
		go clock.Advance(cfg.GiveUpAfter)
		<-entered
		closed := make(chan error, 1)
		go func() { closed <- n.Close(context.Background()) }()
		synctest.Wait()
		select {
		case <-closed:
			t.Fatal("Close returned while the retired peer's report was running")
		default:
		}
		close(release)
		released = true
		assert.NoError(t, <-closed)
	})
}
