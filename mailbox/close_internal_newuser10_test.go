package mailbox

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/scheduler"
)

type newuser10Dispatcher struct{}

func (newuser10Dispatcher) Schedule(scheduler.Runnable)                        {}
func (newuser10Dispatcher) ScheduleFrom(*scheduler.Worker, scheduler.Runnable) {}

type newuser10Runnable struct{ sunk *int }

func (r newuser10Runnable) Sink(int)                             { *r.sunk++ }
func (newuser10Runnable) InvokeBatch(int) scheduler.InvokeResult { return scheduler.Completed(false) }
func (newuser10Runnable) MailboxIndex() scheduler.MailboxIndex   { return 0 }
func (newuser10Runnable) AddMiddleware(scheduler.Middleware)     {}
func (newuser10Runnable) BindWorker(*scheduler.Worker)           {}
func (newuser10Runnable) SetIdle() bool                          { return false }
func (newuser10Runnable) Defer()                                 {}
func (newuser10Runnable) Wake() bool                             { return false }

// A closed mailbox gives back the ring its backlog grew: its owner (an
// actor's cell) stays reachable through every PID that reached it, and the
// ring stayed with it (512 KiB after a backlog of 16,384 messages).
// Posts after Close still reach the sink.
func TestNewuser10ClosedMailboxGivesItsRingBack(t *testing.T) {
	sunk := 0
	m := New[int](nil, nil)
	m.Attach(newuser10Dispatcher{}, newuser10Runnable{sunk: &sunk})
	const backlog = 20000
	for i := range backlog {
		require.NoError(t, m.PostUser(nil, i))
	}
	for range backlog {
		_, ok := m.PopUser()
		require.True(t, ok)
	}
	m.SetIdle()
	require.Greater(t, m.user.Cap(), 1024, "the backlog grew the ring")
	m.Close()
	require.Zero(t, m.user.Cap(), "a closed mailbox keeps its ring")
	require.NoError(t, m.PostUser(nil, 1))
	require.Equal(t, 1, sunk)
}
