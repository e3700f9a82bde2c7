package mailbox_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/mailbox"
	"github.com/fraktor-go/fraktor/scheduler"
)

// countingDispatcher records schedules; the test plays the executor.
type countingDispatcher struct {
	n     atomic.Int64
	ready chan scheduler.Runnable
}

func (d *countingDispatcher) Schedule(r scheduler.Runnable) {
	d.n.Add(1)
	d.ready <- r
}
func (d *countingDispatcher) ScheduleFrom(_ *scheduler.Worker, r scheduler.Runnable) { d.Schedule(r) }

type nopRunnable struct {
	mb   *mailbox.Mailbox[int]
	sink *func(int)
}

func (r nopRunnable) Sink(v int) {
	if *r.sink != nil {
		(*r.sink)(v)
	}
}

func (nopRunnable) InvokeBatch(int) scheduler.InvokeResult { return scheduler.Completed(false) }
func (nopRunnable) MailboxIndex() scheduler.MailboxIndex   { return 0 }
func (nopRunnable) AddMiddleware(scheduler.Middleware)     {}
func (nopRunnable) BindWorker(*scheduler.Worker)           {}
func (r nopRunnable) SetIdle() bool                        { return r.mb.SetIdle() }
func (r nopRunnable) Defer()                               { r.mb.Defer() }
func (r nopRunnable) Wake() bool                           { return r.mb.Wake() }

func newMailbox(q mailbox.Queue[int]) (*mailbox.Mailbox[int], *countingDispatcher) {
	d := &countingDispatcher{ready: make(chan scheduler.Runnable, 1<<16)}
	mb := mailbox.New[int](q, nil)
	var sink func(int)
	mb.Attach(d, nopRunnable{mb: mb, sink: &sink})
	sinks[mb] = &sink
	return mb, d
}

// One schedule per idle → scheduled transition, however many posts.
func TestMailboxSchedulesOnce(t *testing.T) {
	mb, d := newMailbox(nil)
	for i := 0; i < 100; i++ {
		require.NoError(t, mb.PostUser(nil, i))
	}
	require.Equal(t, int64(1), d.n.Load())
	for i := 0; i < 100; i++ {
		v, ok := mb.PopUser()
		require.True(t, ok)
		require.Equal(t, i, v)
	}
	require.False(t, mb.SetIdle())
	require.NoError(t, mb.PostUser(nil, 1))
	require.Equal(t, int64(2), d.n.Load())
}

// PostUsers posts a run in order with one schedule; a run after the
// consumer went idle schedules again, one on a suspended mailbox does not.
func TestMailboxPostUsers(t *testing.T) {
	mb, d := newMailbox(nil)
	require.True(t, mb.PostUsers(nil, []int{0, 1, 2}))
	require.NoError(t, mb.PostUser(nil, 3))
	require.True(t, mb.PostUsers(nil, []int{4, 5}))
	require.True(t, mb.PostUsers(nil, nil))
	require.Equal(t, int64(1), d.n.Load())
	for i := range 6 {
		v, ok := mb.PopUser()
		require.True(t, ok)
		require.Equal(t, i, v)
	}
	require.False(t, mb.SetIdle())
	require.True(t, mb.PostUsers(nil, []int{6, 7}))
	require.Equal(t, int64(2), d.n.Load())
	for i := 6; i < 8; i++ {
		v, ok := mb.PopUser()
		require.True(t, ok)
		require.Equal(t, i, v)
	}
	mb.Suspend()
	require.False(t, mb.SetIdle())
	require.True(t, mb.PostUsers(nil, []int{8}))
	require.Equal(t, int64(2), d.n.Load(), "suspended: user posts do not schedule")
}

// PostUsers leaves a custom queue to PostUser (it reports the refusals of a
// bounded one) and hands a closed mailbox's run to the sink.
func TestMailboxPostUsersCustomAndClosed(t *testing.T) {
	mb, d := newMailbox(mailbox.NewBounded[int](1, mailbox.Reject))
	require.False(t, mb.PostUsers(nil, []int{1, 2}))
	require.Zero(t, mb.UserLen())
	require.Zero(t, d.n.Load())

	mb, d = newMailbox(nil)
	var sunk []int
	*sinks[mb] = func(v int) { sunk = append(sunk, v) }
	mb.Close()
	require.True(t, mb.PostUsers(nil, []int{1, 2, 3}))
	require.Equal(t, []int{1, 2, 3}, sunk)
	require.Zero(t, d.n.Load())
}

// System messages schedule even when suspended; user messages do not, and
// resume lets them run.
func TestMailboxSuspend(t *testing.T) {
	mb, d := newMailbox(nil)
	mb.Suspend()
	require.NoError(t, mb.PostUser(nil, 1))
	require.Equal(t, int64(0), d.n.Load())
	mb.PostSystem(nil, 2)
	require.Equal(t, int64(1), d.n.Load())
	v, ok := mb.PopSystem()
	require.True(t, ok)
	require.Equal(t, 2, v)
	require.False(t, mb.SetIdle(), "suspended: the user message does not re-claim")
	mb.Resume()
	mb.PostSystem(nil, 3) // e.g. the resume directive itself
	require.Equal(t, int64(2), d.n.Load())
	_, _ = mb.PopSystem()
	v, ok = mb.PopUser()
	require.True(t, ok)
	require.Equal(t, 1, v)
}

// The idle re-check closes the race with a concurrent post: under many
// posters and a consumer that goes idle as often as it can, every value is
// consumed and the mailbox is never scheduled twice at once.
func TestMailboxNoLostWakeups(t *testing.T) {
	mb, d := newMailbox(nil)
	const posters, each = 4, 5000
	var wg sync.WaitGroup
	for p := 0; p < posters; p++ {
		wg.Go(func() {
			for i := 0; i < each; i++ {
				_ = mb.PostUser(nil, i)
			}
		})
	}
	got := 0
	for got < posters*each {
		<-d.ready // exactly one consumer at a time
		for {
			if _, ok := mb.PopUser(); !ok {
				break
			}
			got++
		}
		if mb.SetIdle() {
			d.ready <- nil // re-claimed: run again
		}
	}
	wg.Wait()
	assert.Equal(t, posters*each, got)
	assert.Empty(t, d.ready)
}

// After Close, queued and later posts go to the sink; nothing is lost.
func TestMailboxCloseDrainsToSink(t *testing.T) {
	mb, _ := newMailbox(nil)
	for i := 0; i < 10; i++ {
		_ = mb.PostUser(nil, i)
	}
	var mu sync.Mutex
	var sunk []int
	*sinks[mb] = func(v int) { mu.Lock(); sunk = append(sunk, v); mu.Unlock() }
	mb.Close()
	require.True(t, mb.Closed())
	var wg sync.WaitGroup
	for p := 0; p < 4; p++ {
		wg.Go(func() {
			for i := 0; i < 1000; i++ {
				_ = mb.PostUser(nil, 100)
			}
		})
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	assert.Len(t, sunk, 10+4000)
}

func TestMailboxBoundedReject(t *testing.T) {
	mb, _ := newMailbox(mailbox.NewBounded[int](1, mailbox.Reject))
	require.NoError(t, mb.PostUser(nil, 1))
	require.ErrorIs(t, mb.PostUser(nil, 2), mailbox.ErrFull)
	require.Equal(t, 1, mb.UserLen())
}

// sinks lets a test set the sink of a mailbox made by newMailbox.
var sinks = map[*mailbox.Mailbox[int]]*func(int){}

// A deferred mailbox (timed suspension) ignores user posts, is woken by a
// system post, and then the timer's Wake loses.
func TestMailboxDeferred(t *testing.T) {
	mb, d := newMailbox(nil)
	require.NoError(t, mb.PostUser(nil, 1))
	require.Equal(t, int64(1), d.n.Load())
	<-d.ready
	mb.Defer()
	require.NoError(t, mb.PostUser(nil, 2))
	require.Equal(t, int64(1), d.n.Load(), "user posts wait for the timer")
	mb.PostSystem(nil, 3)
	require.Equal(t, int64(2), d.n.Load(), "a system post wakes it")
	require.False(t, mb.Wake(), "the timer finds it awake already")

	mb2, d2 := newMailbox(nil)
	require.NoError(t, mb2.PostUser(nil, 1))
	<-d2.ready
	mb2.Defer()
	require.True(t, mb2.Wake(), "the timer wakes it")
	mb2.PostSystem(nil, 2)
	require.Equal(t, int64(1), d2.n.Load(), "already scheduled by the timer's owner")
}

// A system message posted while the invocation ends, after the invoker
// drained the system queue and before the executor defers the mailbox,
// schedules it at once: its poster found it scheduled and left it to the
// consumer. Before, the deferral buried it until the resume timer, so a
// rate limit delayed a stop (or, had the timer been stopped, lost it).
func TestMailboxDeferRechecksSystem(t *testing.T) {
	mb, d := newMailbox(nil)
	require.NoError(t, mb.PostUser(nil, 1))
	<-d.ready
	_, ok := mb.PopUser()
	require.True(t, ok)
	mb.PostSystem(nil, 7) // the invoker has returned; the executor settles
	require.Equal(t, int64(1), d.n.Load(), "its poster left it to the consumer")
	mb.Defer()
	require.Equal(t, int64(2), d.n.Load(), "the deferral hands it back to the dispatcher")
	require.False(t, mb.Wake(), "the resume timer finds it scheduled")
	v, ok := mb.PopSystem()
	require.True(t, ok)
	require.Equal(t, 7, v)

	// A user post meanwhile does not: user posts wait for the timer.
	require.NoError(t, mb.PostUser(nil, 2))
	mb.Defer()
	require.Equal(t, int64(2), d.n.Load())
	require.True(t, mb.Wake())
}

// PostUserClaim gives the caller the scheduled status of an idle mailbox
// instead of scheduling it; otherwise it is PostUser.
func TestMailboxPostUserClaim(t *testing.T) {
	mb, d := newMailbox(nil)
	claimed, err := mb.PostUserClaim(1)
	require.NoError(t, err)
	assert.True(t, claimed)
	assert.Zero(t, d.n.Load(), "not handed to the dispatcher")
	claimed, err = mb.PostUserClaim(2)
	require.NoError(t, err)
	assert.False(t, claimed, "already scheduled: the claimer runs it")
	for _, want := range []int{1, 2} {
		v, ok := mb.PopUser()
		require.True(t, ok)
		assert.Equal(t, want, v)
	}
	assert.False(t, mb.SetIdle())

	mb.Suspend()
	claimed, err = mb.PostUserClaim(3)
	require.NoError(t, err)
	assert.False(t, claimed, "suspended: user posts do not make it runnable")
	assert.Zero(t, d.n.Load())

	full, _ := newMailbox(mailbox.NewBounded[int](1, mailbox.Reject))
	_, err = full.PostUserClaim(1)
	require.NoError(t, err)
	_, err = full.PostUserClaim(2)
	assert.ErrorIs(t, err, mailbox.ErrFull)
}

// PostSystemClaim gives the caller the scheduled status of an idle mailbox
// instead of scheduling it, even while suspended (system messages always
// make it runnable); otherwise it is PostSystem.
func TestMailboxPostSystemClaim(t *testing.T) {
	mb, d := newMailbox(nil)
	mb.Suspend()
	assert.True(t, mb.PostSystemClaim(1), "idle, even suspended: claimed")
	assert.Zero(t, d.n.Load(), "not handed to the dispatcher")
	assert.False(t, mb.PostSystemClaim(2), "already scheduled: the claimer runs it")
	assert.Zero(t, d.n.Load())
	for _, want := range []int{1, 2} {
		v, ok := mb.PopSystem()
		require.True(t, ok)
		assert.Equal(t, want, v)
	}
	assert.False(t, mb.SetIdle())
}
