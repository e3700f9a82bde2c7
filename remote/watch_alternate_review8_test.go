package remote_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The watch dedupe (TestRepeatedWatchAndUnwatchQueueNothing) drops a
// repeated Watch and an Unwatch of nothing, but a peer that alternates
// WatchRequest and UnwatchRequest for one watcher still puts a system
// message in the target's queue for each request: 2 per pair, as many as
// it sends while the actor is stuck in Receive (the process here never
// drains them, as a stuck actor does not), so what a hostile peer can
// queue in a local actor is still unbounded, and docs/remote.md ("What is
// not bounded") lists only StopRequest and TerminatedNotice. The process
// needs at most one pending change per watcher: here the last request is
// an Unwatch, so the process ends with no watcher, and a queue holding at
// most a couple of messages for that watcher would do.
func TestAlternatingWatchUnwatchQueuesBounded(t *testing.T) {
	sysA, ra := startSystem(t, "a", testConfig(t))
	echoOn(t, sysA, "echo", "a")
	proc := &countingProcess{}
	_, err := sysA.RegisterProcess("counted", proc)
	require.NoError(t, err)
	p := newWatchPeer(t, ra.Address())

	const pairs = 1000
	for range pairs {
		p.watch("w", "counted")
		p.unwatch("w", "counted")
	}
	p.sync("echo")
	queued := proc.watches.Load() + proc.unwatches.Load()
	require.LessOrEqual(t, queued, int64(2),
		"%d Watch/Unwatch pairs from one peer for one watcher queued %d system messages in the target", pairs, queued)
}
