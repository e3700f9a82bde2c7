package actor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestShutdownUnfinishedStopCrossesPools: when Shutdown's ctx ends while a
// user actor's Stopping blocks, the stop of its tree goes on once the hook
// returns, across pools: a parent on the shared pool stops its child on
// the blocking pool, and the other way round. Before, Shutdown closed both
// pools once ctx had ended, and a closed pool whose workers were parked
// had exited them all: the stop sent to the child on the other pool was
// dropped, so the child never stopped, its parent waited for it for good
// (its Stopped never ran), and neither did the guardians.
func TestShutdownUnfinishedStopCrossesPools(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		parentOpts, childOpts []PropsOption
	}{
		{"shared_parent_blocking_child", nil, []PropsOption{WithBlocking()}},
		{"blocking_parent_shared_child", []PropsOption{WithBlocking()}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sys, err := NewSystem(SystemConfig{Workers: 2, BlockingWorkers: 2})
			require.NoError(t, err)
			inside, release := make(chan struct{}), make(chan struct{})
			parentStopped, childStopped := make(chan struct{}), make(chan struct{})
			childUp := make(chan struct{})
			child := PropsFromFunc(func(c Context) {
				switch c.Message().(type) {
				case *Started:
					close(childUp)
				case *Stopped:
					close(childStopped)
				}
			}, tc.childOpts...)
			sys.Root().Spawn(PropsFromFunc(func(c Context) {
				switch c.Message().(type) {
				case *Started:
					c.Spawn(child)
				case *Stopping:
					close(inside)
					<-release
				case *Stopped:
					close(parentStopped)
				}
			}, tc.parentOpts...))
			<-childUp

			require.ErrorIs(t, sys.Shutdown(endedCtx()), context.Canceled)
			select { // both pools are closed by now
			case <-inside:
			case <-time.After(10 * time.Second):
				t.Fatal("the parent's stop never began")
			}
			close(release)
			for _, w := range []struct {
				what string
				ch   <-chan struct{}
			}{{"the child", childStopped}, {"the parent", parentStopped}, {"the guardians", sys.guardiansDone}} {
				select {
				case <-w.ch:
				case <-time.After(10 * time.Second):
					t.Fatalf("%s never stopped after the blocked hook returned", w.what)
				}
			}
			goleak.VerifyNone(t)
		})
	}
}
