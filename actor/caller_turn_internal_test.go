package actor

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/scheduler"
)

// goid returns the calling goroutine's ID (tests only: it parses the
// first line of the goroutine's stack).
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	id, _ := strconv.ParseUint(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return id
}

// newCallerTurnSystem starts a system with n workers and waits until they
// are all parked: the state in which a Request from outside runs on the
// caller. Its deferred turns wait a minute for their caller, not
// deferredTurnGrace: a test that checks the slot right after deferring
// must not see the sweep's work when the machine pauses it for 100 µs
// (tests of the sweep set sys.deferGrace themselves).
func newCallerTurnSystem(t *testing.T, n int) *System {
	t.Helper()
	sys, err := NewSystem(SystemConfig{Workers: n})
	require.NoError(t, err)
	sys.deferGrace = time.Minute
	t.Cleanup(func() { require.NoError(t, sys.Shutdown(context.Background())) })
	waitPoolIdle(t, sys)
	return sys
}

// waitPoolIdle waits until every worker of sys's shared pool is parked
// and its ready queue is empty (a worker being woken still counts as
// parked, but what it was woken for is still queued).
func waitPoolIdle(t *testing.T, sys *System) {
	t.Helper()
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Microsecond)
	defer tick.Stop()
	for sys.coord.Parked() != sys.coord.Workers() || sys.coord.Queued() != 0 {
		select {
		case <-deadline.C:
			t.Fatalf("parked %d of %d workers", sys.coord.Parked(), sys.coord.Workers())
		case <-tick.C:
		}
	}
}

// whereProps answers every string with the ID of the goroutine that ran
// the turn.
func whereProps(opts ...PropsOption) *Props {
	return PropsFromFunc(func(c Context) {
		if _, ok := c.Message().(string); ok {
			c.Respond(goid())
		}
	}, opts...)
}

// With the pool idle, a Request from outside runs the target's turn on the
// caller's goroutine; with a worker busy it runs on a worker.
func TestRequestCallerTurnIdleVsBusy(t *testing.T) {
	sys := newCallerTurnSystem(t, 2)
	echo := sys.Root().Spawn(whereProps())
	waitPoolIdle(t, sys) // the spawn's Started ran on a worker
	ctx := context.Background()
	me := goid()
	got, err := Request[uint64](ctx, sys.Root(), echo, "where")
	require.NoError(t, err)
	assert.Equal(t, me, got, "idle pool: the turn ran on the caller")
	assert.Equal(t, 2, sys.coord.Parked(), "no worker woken")

	running, release := make(chan struct{}), make(chan struct{})
	blocker := sys.Root().Spawn(PropsFromFunc(func(c Context) {
		if c.Message() == "block" {
			close(running)
			<-release
		}
	}))
	sys.Root().Send(blocker, "block")
	<-running
	got, err = Request[uint64](ctx, sys.Root(), echo, "where")
	close(release)
	require.NoError(t, err)
	assert.NotEqual(t, me, got, "a worker is busy: the turn ran on the pool")
}

// Actors on a dedicated dispatcher never run on the caller.
func TestRequestCallerTurnSharedPoolOnly(t *testing.T) {
	own := scheduler.NewCoordinator(scheduler.Config{Workers: 1})
	own.Start()
	t.Cleanup(func() { require.NoError(t, own.Shutdown(context.Background())) }) // after the system's
	sys := newCallerTurnSystem(t, 2)
	for name, opt := range map[string]PropsOption{
		"blocking":   WithBlocking(),
		"dispatcher": WithDispatcher(own),
	} {
		t.Run(name, func(t *testing.T) {
			pid := sys.Root().Spawn(whereProps(opt))
			waitPoolIdle(t, sys)
			got, err := Request[uint64](context.Background(), sys.Root(), pid, "where")
			require.NoError(t, err)
			assert.NotEqual(t, goid(), got)
		})
	}
}

// A panic in Receive on a caller turn is the actor's failure as on a
// worker: the supervisor restarts it, the caller's goroutine survives, and
// the restarted actor answers.
func TestRequestCallerTurnPanicIsSupervised(t *testing.T) {
	sys := newCallerTurnSystem(t, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var panickedOn atomic.Uint64
	var restarts atomic.Int32
	pid := sys.Root().Spawn(PropsFromFunc(func(c Context) {
		switch c.Message().(type) {
		case *Restarting:
			restarts.Add(1)
			cancel() // the failed request gets no answer: end its wait
		case string:
			panickedOn.Store(goid())
			panic("boom")
		case int:
			c.Respond(goid())
		}
	}))
	waitPoolIdle(t, sys)
	_, err := Request[uint64](ctx, sys.Root(), pid, "boom")
	assert.ErrorIs(t, err, ErrTimeout)
	assert.Equal(t, goid(), panickedOn.Load(), "the panic happened on the caller turn")
	assert.Equal(t, int32(1), restarts.Load())
	_, err = Request[uint64](context.Background(), sys.Root(), pid, 1)
	require.NoError(t, err, "restarted and answering")
}

// Receive and invoke middleware run on a caller turn as on a worker.
func TestRequestCallerTurnMiddleware(t *testing.T) {
	sys := newCallerTurnSystem(t, 2)
	var received, before, after atomic.Int32
	recv := func(next ReceiveFunc) ReceiveFunc {
		return func(c Context) {
			if _, ok := c.Message().(string); ok {
				received.Add(1)
			}
			next(c)
		}
	}
	inv := &countingInvokeMW{before: &before, after: &after}
	pid := sys.Root().Spawn(whereProps(WithReceiveMiddleware(recv), WithInvokeMiddleware(func() scheduler.Middleware { return inv })))
	waitPoolIdle(t, sys)
	b0, a0 := before.Load(), after.Load()
	got, err := Request[uint64](context.Background(), sys.Root(), pid, "where")
	require.NoError(t, err)
	assert.Equal(t, goid(), got, "ran on the caller")
	assert.Equal(t, int32(1), received.Load())
	assert.Equal(t, b0+1, before.Load())
	assert.Equal(t, a0+1, after.Load())
}

type countingInvokeMW struct{ before, after *atomic.Int32 }

func (m *countingInvokeMW) BeforeInvoke(*scheduler.InvokeContext) scheduler.ControlFlow {
	m.before.Add(1)
	return scheduler.Continue
}
func (m *countingInvokeMW) AfterInvoke(*scheduler.InvokeContext, scheduler.InvokeResult) {
	m.after.Add(1)
}

// A context that ends during a turn on the caller cannot interrupt it:
// the answer still arrives.
func TestRequestCallerTurnContextEndsMidTurn(t *testing.T) {
	sys := newCallerTurnSystem(t, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pid := sys.Root().Spawn(PropsFromFunc(func(c Context) {
		if _, ok := c.Message().(string); ok {
			cancel()
			c.Respond("answer")
		}
	}))
	waitPoolIdle(t, sys)
	got, err := Request[string](ctx, sys.Root(), pid, "go")
	require.NoError(t, err)
	assert.Equal(t, "answer", got)
}
