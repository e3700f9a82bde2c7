package actor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/mailbox"
)

type runGot struct {
	msg    any
	sender *PID
}

// runRecorder spawns an actor that passes each int it receives, with its
// sender, to the returned channel, and returns its process.
func runRecorder(t *testing.T, sys *System, opts ...PropsOption) (*PID, Process, <-chan runGot) {
	t.Helper()
	got := make(chan runGot, 512)
	pid := sys.Root().Spawn(PropsFromFunc(func(c Context) {
		if _, ok := c.Message().(int); ok {
			got <- runGot{c.Message(), c.Sender()}
		}
	}, opts...))
	p, ok := sys.registry.get(pid.ID)
	require.True(t, ok)
	return pid, p, got
}

func expectRun(t *testing.T, got <-chan runGot, sender *PID, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		select {
		case g := <-got:
			require.Equal(t, i, g.msg)
			require.Same(t, sender, g.sender)
		case <-time.After(15 * time.Second):
			t.Fatalf("message %d did not arrive", i)
		}
	}
}

// A UserRun holds its messages until Flush, a full run or a message for
// another PID posts them, in order, with their senders; into a bounded
// mailbox too (one by one). A stopped actor's run becomes dead letters.
func TestUserRun(t *testing.T) {
	sys := newTestSystem(t)
	sender := NewPID("elsewhere:1", "s")
	for _, tc := range []struct {
		name string
		opts []PropsOption
	}{
		{"default", nil},
		{"bounded", []PropsOption{WithBoundedMailbox(1000, mailbox.Reject)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pid, p, got := runRecorder(t, sys, tc.opts...)
			other, otherP, otherGot := runRecorder(t, sys)
			var run UserRun
			for i := range 3 {
				run.Add(p, pid, i, sender)
			}
			require.Equal(t, 3, run.Len())
			select {
			case g := <-got:
				t.Fatalf("%v posted before Flush", g.msg)
			default:
			}
			run.Add(otherP, other, 0, nil) // another PID: the run so far goes
			expectRun(t, got, sender, 0, 3)
			run.Flush()
			expectRun(t, otherGot, nil, 0, 1)

			for i := range 2*userRunMax + 5 {
				run.Add(p, pid, i, sender)
			}
			assert.Equal(t, 5, run.Len(), "full runs were posted")
			expectRun(t, got, sender, 0, 2*userRunMax)
			run.Flush()
			expectRun(t, got, sender, 2*userRunMax, 2*userRunMax+5)
			run.Flush() // empty: nothing
			assert.Zero(t, run.Len())

			require.NoError(t, sys.Root().StopFuture(pid).Wait())
			dead := sys.DeadLetters()
			for i := range 5 {
				run.Add(p, pid, i, nil)
			}
			run.Flush()
			require.Equal(t, dead+5, sys.DeadLetters())
		})
	}
}
