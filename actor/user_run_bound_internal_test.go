package actor

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/mailbox"
)

// holdingRecorder spawns an actor that, on the string "hold", signals busy
// and waits in Receive until release is closed, and passes each int it
// receives to got.
func holdingRecorder(t *testing.T, sys *System, opts ...PropsOption) (pid *PID, p Process, got <-chan int, busy <-chan struct{}, release chan struct{}) {
	t.Helper()
	ch, b, rel := make(chan int, 1024), make(chan struct{}), make(chan struct{})
	pid = sys.Root().Spawn(PropsFromFunc(func(c Context) {
		switch m := c.Message().(type) {
		case string:
			if m == "hold" {
				close(b)
				<-rel
			}
		case int:
			ch <- m
		}
	}, append(opts, WithBlocking())...)) // it blocks: not on the shared workers
	p, ok := sys.registry.get(pid.ID)
	require.True(t, ok)
	t.Cleanup(func() { // before the system's Shutdown, which waits for the actor
		select {
		case <-rel:
		default:
			close(rel)
		}
	})
	return pid, p, ch, b, rel
}

// received takes ints from got until want arrived (in this order), and
// fails on anything else.
func received(t *testing.T, got <-chan int, want ...int) {
	t.Helper()
	for _, w := range want {
		select {
		case g := <-got:
			require.Equal(t, w, g)
		case <-time.After(15 * time.Second):
			t.Fatalf("message %d did not arrive", w)
		}
	}
}

func seq(from, to int) []int {
	s := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

// A run with a backlog bound (SetMaxBacklog) adds to a local actor's
// mailbox only as far as the bound: against an actor blocked in Receive,
// 300 messages in runs of 64 leave at most 100 queued, the first ones in
// order (the refused ones are the end of the run that crossed the bound
// and every later run); the others are dead letters with ErrBacklogFull,
// which wraps ErrMailboxFull, and Refused counts them. Local senders are
// never refused. Once the actor has drained its mailbox, runs are taken
// again. Without the bound every message was queued. The bound reads a
// custom (bounded) mailbox's length too.
func TestUserRunMaxBacklog(t *testing.T) {
	const bound, sent = 100, 300
	for _, tc := range []struct {
		name string
		opts []PropsOption
	}{
		{"default", nil},
		{"bounded-mailbox", []PropsOption{WithBoundedMailbox(1000, mailbox.Reject)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sys := newTestSystem(t)
			var backlogFull, otherDead atomic.Int64
			counted := make(chan struct{}, 1024)
			sub := Subscribe(sys.EventStream(), func(e *DeadLetterEvent) {
				if errors.Is(e.Reason, ErrBacklogFull) && errors.Is(e.Reason, ErrMailboxFull) {
					backlogFull.Add(1)
				} else {
					otherDead.Add(1)
				}
				counted <- struct{}{}
			})
			defer sys.EventStream().Unsubscribe(sub)
			pid, p, got, busy, release := holdingRecorder(t, sys, tc.opts...)
			var run UserRun
			run.SetMaxBacklog(bound)
			run.Add(p, pid, "hold", nil)
			run.Flush()
			<-busy

			dead := sys.DeadLetters()
			for i := range sent {
				run.Add(p, pid, i, nil)
			}
			run.Flush()
			refused, last := run.Refused()
			accepted := sent - refused
			require.LessOrEqual(t, accepted, bound, "the mailbox holds at most the bound")
			require.GreaterOrEqual(t, accepted, userRunMax, "a run that fits is taken whole")
			require.Same(t, pid, last)
			require.Equal(t, dead+uint64(refused), sys.DeadLetters())

			// Local senders are not bounded; a run that starts at the bound
			// is refused whole.
			for i := range 50 {
				sys.Root().Send(pid, 1000+i)
			}
			for i := range 10 {
				run.Add(p, pid, 2000+i, nil)
			}
			run.Flush()
			again, _ := run.Refused()
			require.Equal(t, refused+10, again)
			assert.False(t, SendUserBounded(p, pid, 3000, nil, bound), "a single message beyond the bound is refused")
			for range again + 1 { // the EventStream delivers on its own goroutine
				select {
				case <-counted:
				case <-time.After(15 * time.Second):
					t.Fatal("dead letter events missing")
				}
			}
			assert.Equal(t, int64(again+1), backlogFull.Load())
			assert.Zero(t, otherDead.Load())

			close(release)
			received(t, got, append(seq(0, accepted), seq(1000, 1050)...)...)

			// Drained: a run fits again, and so does a single message.
			for i := range 50 {
				run.Add(p, pid, 4000+i, nil)
			}
			run.Flush()
			require.True(t, SendUserBounded(p, pid, 5000, nil, bound))
			received(t, got, append(seq(4000, 4050), 5000)...)
			after, _ := run.Refused()
			require.Equal(t, again, after)
			select {
			case g := <-got:
				t.Fatalf("refused message %d was delivered", g)
			default:
			}
		})
	}
}

// SendUserBounded bounds local actors only: a future (or any process that
// is not an actor) takes its message whatever the bound, and a bound of 0
// is none.
func TestSendUserBoundedNotActors(t *testing.T) {
	sys := newTestSystem(t)
	silent := sys.Root().Spawn(PropsFromFunc(func(Context) {}))
	f := sys.Root().RequestFuture(silent, "q", time.Minute)
	require.True(t, SendUserBounded(f, f.PID(), "answer", nil, 1))
	res, err := f.Result()
	require.NoError(t, err)
	require.Equal(t, "answer", res)

	pid, p, got, busy, release := holdingRecorder(t, sys)
	sys.Root().Send(pid, "hold")
	<-busy
	for i := range 3 {
		require.True(t, SendUserBounded(p, pid, i, nil, 0))
	}
	close(release)
	received(t, got, 0, 1, 2)
}
