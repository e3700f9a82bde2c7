package actor_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// dropProcess stands for the processes of another node: it drops everything.
type dropProcess struct{}

func (dropProcess) SendUser(*actor.PID, any, *actor.PID)       {}
func (dropProcess) SendSystem(*actor.PID, actor.SystemMessage) {}
func (dropProcess) StopProcess(*actor.PID)                     {}

// TestFailRequestsTo: the pending requests to one address fail at once with
// ErrDeadLetter and the reason; requests to other addresses, and futures
// that are not requests, are left alone.
func TestFailRequestsTo(t *testing.T) {
	grab := &hostGrab{}
	sys, err := actor.NewSystem(actor.SystemConfig{Extensions: []actor.ExtensionInstaller{grab}})
	require.NoError(t, err)
	defer func() { require.NoError(t, sys.Shutdown(context.Background())) }()
	host := grab.host
	host.SetRemoteHandler(func(*actor.PID) actor.Process { return dropProcess{} })
	gone := errors.New("node gone")

	dead := sys.Root().RequestFuture(actor.NewPID("dead:1", "a"), "hello", 0)
	other := sys.Root().RequestFuture(actor.NewPID("alive:1", "a"), "hello", 0)
	stop := sys.Root().StopFuture(actor.NewPID("dead:1", "b"))

	assert.Equal(t, 0, host.FailRequestsTo(sys.Address(), gone), "never the local address")
	require.Equal(t, 1, host.FailRequestsTo("dead:1", gone))
	_, err = dead.Result()
	assert.ErrorIs(t, err, actor.ErrDeadLetter)
	assert.ErrorIs(t, err, gone)
	assert.Equal(t, 0, host.FailRequestsTo("dead:1", gone), "a completed future is not failed again")

	for _, f := range []*actor.Future{other, stop} {
		select {
		case <-f.Done():
			t.Fatal("a future that is not a request to the dead address completed")
		default:
		}
	}
	other.StopProcess(other.PID())
	stop.StopProcess(stop.PID())
}

// TestFailRequestsToRacesNewRequests: a transport fails the requests to an
// address while new requests to it are being made. Each request fails with
// the reason; the race detector checks that every field a failure reads was
// written before the future became reachable by ID (or by address), and no
// failed future stays registered (a failure that came before the registry
// had the future would leave it there).
func TestFailRequestsToRacesNewRequests(t *testing.T) {
	grab := &hostGrab{}
	sys, err := actor.NewSystem(actor.SystemConfig{Extensions: []actor.ExtensionInstaller{grab}})
	require.NoError(t, err)
	defer func() { require.NoError(t, sys.Shutdown(context.Background())) }()
	host := grab.host
	host.SetRemoteHandler(func(*actor.PID) actor.Process { return dropProcess{} })
	gone := errors.New("node gone")

	processes := sys.ProcessCount()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				host.FailRequestsTo("dead:1", gone)
			}
		}
	})
	for range 1000 {
		f := sys.Root().RequestFuture(actor.NewPID("dead:1", "a"), "hello", 0)
		_, err := f.Result()
		if !assert.ErrorIs(t, err, gone) {
			break
		}
	}
	close(stop)
	wg.Wait()
	assert.Equal(t, processes, sys.ProcessCount(), "failed futures still registered")
}
