package remote

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/scheduler"
)

// The refusals at Config.MaxMailboxBacklog are all counted, and logged at
// most once a second (on the system's clock) with the number of lines held
// back: a flood of refused messages writes a line a second, not one per
// frame.
func TestBacklogRefusedLogThrottled(t *testing.T) {
	logs := &logCapture{}
	cfg := testConfig()
	cfg.Logger = slog.New(logs)
	clock := scheduler.NewManualClock(time.Now())
	sys, err := actor.NewSystem(actor.SystemConfig{Name: "b", Clock: clock, Extensions: []actor.ExtensionInstaller{Install(cfg)}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sys.Shutdown(context.Background()) })
	r := Get(sys)
	from := Peer{Address: "10.0.3.1:1", NodeID: "p"}
	target := actor.NewPID(r.Address(), "slow")
	const msg = "remote: messages from a peer refused: their actor's mailbox held Config.MaxMailboxBacklog messages or more"
	for range 100 {
		r.backlogRefused(from, target, 64)
	}
	require.Equal(t, uint64(6400), r.Node().Stats().BacklogRefused)
	require.Len(t, logs.find(msg, "refused"), 1)
	clock.Advance(refusalLogInterval)
	r.backlogRefused(from, target, 1)
	held := logs.find(msg, "suppressed")
	require.Len(t, held, 2)
	require.Equal(t, uint64(99), held[1].Uint64(), "the lines held back since the last one")
	require.Contains(t, logs.find(msg, "actor")[1].String(), "slow")
}
