package remote_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// The spawn bound's count is exact under the interleavings it was written
// for: two peers spawn, at once, actors that stop themselves in Started,
// under the same 16 names, so a name is taken again while the actor
// that had it is stopping (its Terminated not yet handled), and a Watch
// of the bound often reaches an actor already gone. Once every spawned
// actor is known stopped, neither peer holds a place, and each can fill
// its bound again.
func TestReview7SpawnBoundExactUnderNameReuse(t *testing.T) {
	cfg := testConfig(t)
	quick := actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			c.Stop(c.Self())
		}
	})
	cfg.Kinds = map[string]*actor.Props{"quick": quick, "echo": echoProps("b")}
	cfg.MaxSpawnsPerPeer = 64
	sysB, rb := startSystem(t, "b", cfg)

	peers := []*spawnPeer{newSpawnPeer(t, rb.Address()), newSpawnPeer(t, rb.Address())}
	const n = 400
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	spawned := make([][]remote.PIDRef, len(peers))
	for k, p := range peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				err := p.node.Send(p.to, remote.Envelope{
					Target:  remote.PIDRef{Address: p.to, ID: "$remote-spawner"},
					Sender:  remote.PIDRef{Address: p.node.Address(), ID: "$remote-spawner"},
					Message: &remote.SpawnRequest{Name: fmt.Sprintf("n%d", i%16), Kind: "quick", RequestID: uint64(i + 1)},
				})
				if err != nil {
					errs <- err
					return
				}
			}
			for range n {
				select {
				case a := <-p.answers:
					switch {
					case a.Err == "":
						spawned[k] = append(spawned[k], a.PID)
					case strings.HasPrefix(a.Err, "name-exists: "), strings.HasPrefix(a.Err, "too-many: "):
					default:
						errs <- fmt.Errorf("unexpected answer %q", a.Err)
						return
					}
				case <-ctxWait(t).Done():
					errs <- context.DeadlineExceeded
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	// Each StopFuture completes after the bound's Watch of the same actor
	// was answered (system messages to a process are handled in order).
	for _, s := range spawned {
		for _, pid := range s {
			require.NoError(t, sysB.Root().StopFuture(actor.NewPID(pid.Address, pid.ID)).Wait())
		}
	}
	t.Logf("spawned %d and %d", len(spawned[0]), len(spawned[1]))
	for _, p := range peers {
		require.Equal(t, 0, rb.SpawnedBy(p.node.Address()), "places still held by %s", p.node.Address())
		_, refused := p.spawn(64)
		require.Zero(t, refused)
	}
}
