package actor

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hookRecord is a futurehook.Hook that records its calls.
type hookRecord struct {
	mu    sync.Mutex
	calls int
	f     any
	res   any
	err   error
	then  func() // run by the first call, when not nil
	seen  chan struct{}
}

func newHookRecord() *hookRecord { return &hookRecord{seen: make(chan struct{})} }

func (h *hookRecord) FutureCompleted(f, res any, err error) {
	h.mu.Lock()
	h.calls++
	first := h.calls == 1
	if first {
		h.f, h.res, h.err = f, res, err
	}
	h.mu.Unlock()
	if first {
		if h.then != nil {
			h.then()
		}
		close(h.seen)
	}
}

func (h *hookRecord) wait(t *testing.T) {
	t.Helper()
	select {
	case <-h.seen:
	case <-time.After(10 * time.Second):
		t.Fatal("the hook was never called")
	}
}

// A hooked request future calls its hook once, with its outcome, however it
// completes: an answer, its timeout (the timer node's target is the
// hookedFuture, whose fireTimer is the Future's), a dead letter (its PID
// still resolves to the *Future, which a dead letter fails at once),
// Complete, and the system's shutdown; a later completion calls nothing.
func TestHookedFutureCallsHookOnce(t *testing.T) {
	sys, err := NewSystem(SystemConfig{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, sys.Shutdown(context.Background())) })
	echo := sys.Root().Spawn(PropsFromFunc(func(c Context) {
		if s, ok := c.Message().(string); ok && s != "silent" {
			c.Respond(s + "!")
		}
	}))
	cases := []struct {
		name    string
		pid     *PID
		msg     any
		timeout time.Duration
		wantRes any
		wantErr error
	}{
		{"answer", echo, "hi", time.Minute, "hi!", nil},
		{"timeout", echo, "silent", 20 * time.Millisecond, nil, ErrTimeout},
		{"dead letter", NewPID(sys.Address(), "nobody"), "hi", time.Minute, nil, ErrDeadLetter},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHookRecord()
			f := sys.Root().requestHooked(tc.pid, tc.msg, tc.timeout, h, nil)
			h.wait(t)
			f.Complete("late", nil)
			h.mu.Lock()
			defer h.mu.Unlock()
			assert.Equal(t, 1, h.calls)
			assert.Same(t, f, h.f)
			assert.Equal(t, tc.wantRes, h.res)
			if tc.wantErr == nil {
				assert.NoError(t, h.err)
			} else {
				assert.ErrorIs(t, h.err, tc.wantErr)
			}
			res, err := f.Result()
			assert.Equal(t, tc.wantRes, res)
			assert.Equal(t, h.err, err)
		})
	}
	t.Run("complete", func(t *testing.T) {
		h := newHookRecord()
		f := sys.Root().requestHooked(echo, "silent", time.Minute, h, nil)
		boom := errors.New("boom")
		f.Complete(nil, boom)
		h.wait(t)
		assert.Same(t, boom, h.err)
	})
	t.Run("shutdown", func(t *testing.T) {
		other, err := NewSystem(SystemConfig{})
		require.NoError(t, err)
		// The request is taken (and left unanswered) before Shutdown: a
		// message still queued at Shutdown becomes a dead letter, which
		// fails the future first (with ErrDeadLetter; 9 of 3,000 runs).
		taken := make(chan struct{})
		silent := other.Root().Spawn(PropsFromFunc(func(c Context) {
			if c.Message() == "silent" {
				close(taken)
			}
		}))
		h := newHookRecord()
		other.Root().requestHooked(silent, "silent", time.Minute, h, nil)
		<-taken
		require.NoError(t, other.Shutdown(context.Background()))
		h.wait(t)
		assert.ErrorIs(t, h.err, ErrSystemStopped)
	})
}

// A turn future runs its target's deferred turn on the caller that waits
// for it, as a request future to the target does: a hooked request's hook
// that completes it is then called on the caller too. A future without the
// target would wait for the sweep (a minute in this system) and the turn
// would run on a worker.
func TestHookedFutureTurnFutureRunsOnCaller(t *testing.T) {
	sys := newCallerTurnSystem(t, 2)
	pid := sys.Root().Spawn(whereProps())
	for range 3 {
		waitPoolIdle(t, sys)
		outer := sys.Root().turnFuture(pid)
		h := newHookRecord()
		h.then = func() { outer.Complete(h.res, h.err) }
		sys.Root().requestHooked(pid, "where", 5*time.Second, h, outer)
		got, err := outer.Result()
		require.NoError(t, err)
		assert.Equal(t, goid(), got)
	}
	// A turn future is not a request to its target's node: with futures
	// registered (as remote has them), it is registered by ID but not
	// indexed by the target's address, so the node's failure
	// (FailRequestsTo) does not fail it.
	sys.registerFutures.Store(true)
	far := NewPID("10.0.0.1:1", "far")
	f := sys.Root().turnFuture(far)
	assert.Equal(t, regID, f.reg)
	assert.Zero(t, sys.failRequestsTo(far.Address, errors.New("gone"), 0))
	assert.Zero(t, f.state.Load())
	f.Complete(nil, nil)
}
