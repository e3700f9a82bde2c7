package remote_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// countingProcess counts the system messages delivered to it by type.
type countingProcess struct{ watches, unwatches atomic.Int64 }

func (p *countingProcess) SendUser(*actor.PID, any, *actor.PID) {}
func (p *countingProcess) StopProcess(*actor.PID)               {}
func (p *countingProcess) SendSystem(_ *actor.PID, m actor.SystemMessage) {
	switch m.(type) {
	case *actor.Watch:
		p.watches.Add(1)
	case *actor.Unwatch:
		p.unwatches.Add(1)
	}
}

// A peer that repeats a WatchRequest for a watch it holds, or sends an
// UnwatchRequest for a watch it does not hold, makes the node queue
// nothing: the watch table already says the process has (or has not) that
// watcher. Before, each request put a Watch or Unwatch in the process's
// system queue, as many as the peer sent while an actor was busy in
// Receive (1,000,000 UnwatchRequests from a bare connection: +106 MiB;
// flow's report).
func TestRepeatedWatchAndUnwatchQueueNothing(t *testing.T) {
	sysA, ra := startSystem(t, "a", testConfig(t))
	echoOn(t, sysA, "echo", "a")
	proc := &countingProcess{}
	_, err := sysA.RegisterProcess("counted", proc)
	require.NoError(t, err)
	p := newWatchPeer(t, ra.Address())

	for range 1000 {
		p.unwatch("w", "counted") // never watched
	}
	for range 1000 {
		p.watch("w", "counted")
	}
	for range 1000 {
		p.unwatch("w", "counted")
	}
	p.sync("echo")
	require.EqualValues(t, 1, proc.watches.Load(), "one Watch for the watch held")
	require.EqualValues(t, 1, proc.unwatches.Load(), "one Unwatch for the watch it ended")
	_, in := ra.WatchCounts()
	require.Zero(t, in)

	// A watch after the unwatch is a new one.
	p.watch("w", "counted")
	p.sync("echo")
	require.EqualValues(t, 2, proc.watches.Load())
}
