package actor_test

import (
	"bytes"
	"context"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/goleak"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/scheduler"
)

func endedContext() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// awaitTerminated waits for sys.Terminated, failing the test after 10 s.
func awaitTerminated(t *testing.T, sys *actor.System) {
	t.Helper()
	select {
	case <-sys.Terminated():
	case <-time.After(10 * time.Second):
		t.Fatal("Terminated never closed after the blocked part returned")
	}
}

var goroutineHeader = regexp.MustCompile(`^goroutine (\d+) `)

// goroutineStacks returns the stack of every goroutine, by ID.
func goroutineStacks() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]string{}
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if m := goroutineHeader.FindSubmatch(g); m != nil {
			out[string(m[1])] = string(g)
		}
	}
	return out
}

// runtimeGoroutines returns the goroutines started since before that run
// code of the runtime (a frame in a fraktor package other than a test
// file), except the two that close a done channel as their last step
// (the goroutine that closes Terminated and a pool's wait for its
// workers): checked at once, without goleak's retries, so that a
// goroutine still on its way out when Terminated closed is seen.
func runtimeGoroutines(before map[string]string) []string {
	var out []string
	for id, st := range goroutineStacks() {
		if _, ok := before[id]; ok {
			continue
		}
		if strings.Contains(st, "actor.(*System).terminate") || strings.Contains(st, "scheduler.(*Coordinator).Shutdown.func") {
			continue
		}
		for _, line := range strings.Split(st, "\n") {
			if strings.HasPrefix(line, "github.com/fraktor-go/fraktor/") && !strings.Contains(line, "_test.") {
				out = append(out, st)
				break
			}
		}
	}
	return out
}

// blocker is a part of a system that blocks until release closes: set
// arms it in sys and returns once it blocks.
type blocker struct {
	name string
	set  func(sys *actor.System, inside chan<- struct{}, release <-chan struct{})
	// left is what a Shutdown reports unfinished while it blocks.
	left []string
}

var blockers = []blocker{
	{"receive_on_shared_pool", func(sys *actor.System, inside chan<- struct{}, release <-chan struct{}) {
		pid := sys.Root().Spawn(actor.PropsFromFunc(blockingReceive(inside, release)))
		sys.Root().Send(pid, "block")
	}, []string{"actor: stopping user actors", "actor: stopping the worker pool"}},
	{"receive_on_blocking_pool", func(sys *actor.System, inside chan<- struct{}, release <-chan struct{}) {
		pid := sys.Root().Spawn(actor.PropsFromFunc(blockingReceive(inside, release), actor.WithBlocking()))
		sys.Root().Send(pid, "block")
	}, []string{"actor: stopping user actors", "actor: stopping the worker pool", "actor: stopping the blocking pool"}},
	{"stopped_hook", func(sys *actor.System, inside chan<- struct{}, release <-chan struct{}) {
		pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
			if _, ok := c.Message().(*actor.Stopped); ok {
				close(inside)
				<-release
			}
		}))
		sys.Root().Stop(pid)
	}, []string{"actor: stopping user actors", "actor: stopping the worker pool"}},
	{"subscriber", func(sys *actor.System, inside chan<- struct{}, release <-chan struct{}) {
		sys.EventStream().Subscribe(func(any) {
			close(inside)
			<-release
		})
		sys.EventStream().Publish("event")
	}, []string{"actor: event stream subscribers"}},
}

func blockingReceive(inside chan<- struct{}, release <-chan struct{}) actor.ReceiveFunc {
	return func(c actor.Context) {
		if _, ok := c.Message().(string); ok {
			close(inside)
			<-release
		}
	}
}

// TestTerminatedWaitsForWhatShutdownLeft: a Shutdown whose ctx ends while
// an actor blocks in Receive (on either pool), in Stopped, or a subscriber
// blocks, returns its error and leaves the system running; Terminated
// stays open, and a later Shutdown waits for it only until its own ctx
// ends, then names what is still running. Once the blocked code returns,
// Terminated closes, with every goroutine of the system returned (checked
// at once, no retries), and later calls return nil. Before, nothing told
// when the stop that went on in the background had ended, and a later
// Shutdown returned the first's error at once.
func TestTerminatedWaitsForWhatShutdownLeft(t *testing.T) {
	for _, b := range blockers {
		t.Run(b.name, func(t *testing.T) {
			before := goroutineStacks()
			sys, err := actor.NewSystem(actor.SystemConfig{Workers: 2, BlockingWorkers: 2})
			require.NoError(t, err)
			inside, release := make(chan struct{}), make(chan struct{})
			b.set(sys, inside, release)
			<-inside

			err = sys.Shutdown(endedContext())
			require.ErrorIs(t, err, context.Canceled)
			for _, part := range b.left {
				assert.Contains(t, err.Error(), part)
			}
			assert.False(t, closed(sys.Terminated()), "terminated while a part blocks")
			if b.name != "subscriber" {
				// The wait for the rest begins once the actor trees have
				// stopped: a tree that never stops leaves no waiter.
				for _, st := range goroutineStacks() {
					assert.NotContains(t, st, "actor.(*System).terminate", "a waiter runs while an actor blocks")
				}
			}

			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			err = sys.Shutdown(ctx)
			require.ErrorIs(t, err, context.DeadlineExceeded, "the later call's wait ends with its ctx")
			for _, part := range b.left {
				assert.Contains(t, err.Error(), part+": context deadline exceeded")
			}
			select {
			case <-sys.Terminated():
				t.Fatal("terminated while a part blocks")
			case <-ctx.Done():
			}

			close(release)
			awaitTerminated(t, sys)
			// Each goroutine's signal is its last act, but it has still to
			// return after it: look again for a moment (no event tells of
			// a goroutine's exit), as goleak does.
			left := runtimeGoroutines(before)
			for deadline := time.Now().Add(time.Second); len(left) > 0 && time.Now().Before(deadline); left = runtimeGoroutines(before) {
				runtime.Gosched()
			}
			assert.Empty(t, left, "goroutines of the system still running after Terminated closed")
			require.NoError(t, sys.Shutdown(endedContext()), "terminated: a later call with an ended ctx returns nil")
			goleak.VerifyNone(t)
		})
	}
}

// TestLaterShutdownWaitsForWhatWasLeft: Shutdown calls made together
// while an actor blocks (whichever is first), some with a ctx that has
// ended and some with a live one: the ended ones return ctx's error while
// the actor blocks; the live ones wait until it is released and return
// nil, with Terminated closed by then; goroutines waiting on Terminated
// all wake. Run with -race.
func TestLaterShutdownWaitsForWhatWasLeft(t *testing.T) {
	sys, err := actor.NewSystem(actor.SystemConfig{Workers: 2})
	require.NoError(t, err)
	inside, release := make(chan struct{}), make(chan struct{})
	blockers[0].set(sys, inside, release)
	<-inside

	var liveWG, endedWG sync.WaitGroup
	const n = 4
	live, ended := make([]error, n), make([]error, n)
	terminatedAtReturn := make([]bool, n)
	for i := range n {
		liveWG.Go(func() {
			live[i] = sys.Shutdown(context.Background())
			terminatedAtReturn[i] = closed(sys.Terminated())
		})
		endedWG.Go(func() { ended[i] = sys.Shutdown(endedContext()) })
		liveWG.Go(func() { <-sys.Terminated() })
	}
	endedWG.Wait()
	for i := range n {
		require.ErrorIs(t, ended[i], context.Canceled, "an ended call returned nil while the actor blocks")
	}
	assert.False(t, closed(sys.Terminated()))
	close(release)
	liveWG.Wait()
	for i := range n {
		require.NoError(t, live[i])
		assert.True(t, terminatedAtReturn[i], "a later Shutdown returned nil before Terminated closed")
	}
	goleak.VerifyNone(t)
}

// TestShutdownNilMeansTerminated: a Shutdown that returns nil has closed
// Terminated already, with every goroutine of the system returned: the
// shared and blocking pools' workers and a subscriber's delivery
// goroutine; with the manual dispatcher too.
func TestShutdownNilMeansTerminated(t *testing.T) {
	t.Run("pools_and_subscriber", func(t *testing.T) {
		before := goroutineStacks()
		sys, err := actor.NewSystem(actor.SystemConfig{Workers: 2, BlockingWorkers: 2})
		require.NoError(t, err)
		pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
			if _, ok := c.Message().(string); ok {
				c.Respond("pong")
			}
		}, actor.WithBlocking()))
		_, err = actor.Request[string](context.Background(), sys.Root(), pid, "ping") // the blocking pool runs
		require.NoError(t, err)
		sys.EventStream().Subscribe(func(any) {})
		require.NoError(t, sys.Shutdown(context.Background()))
		require.True(t, closed(sys.Terminated()), "Shutdown returned nil before Terminated closed")
		assert.Empty(t, runtimeGoroutines(before))
	})
	t.Run("manual_dispatcher", func(t *testing.T) {
		sys, err := actor.NewSystem(actor.SystemConfig{Dispatcher: scheduler.NewManual(scheduler.ManualConfig{})})
		require.NoError(t, err)
		sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
		require.NoError(t, sys.Shutdown(context.Background()))
		require.True(t, closed(sys.Terminated()))
	})
}

// holdRootStop is a kind middleware that holds, in AfterInvoke until
// release closes, the worker whose guardian stop is the third to end: all
// three guardians have stopped then (the root's stop itself may end before
// a child guardian's invocation does), and a worker of the pool still
// runs.
type holdRootStop struct {
	stops         *atomic.Int32
	held, release chan struct{}
}

func (holdRootStop) BeforeInvoke(*scheduler.InvokeContext) scheduler.ControlFlow {
	return scheduler.Continue
}

func (h holdRootStop) AfterInvoke(_ *scheduler.InvokeContext, res scheduler.InvokeResult) {
	if res.Kind == scheduler.ResultStopped && h.stops.Add(1) == 3 {
		close(h.held)
		<-h.release
	}
}

// TestTerminatedWaitsForTheLastWorker: the worker that ran the root
// guardian's stop (the last step of a stop that went on after Shutdown's
// ctx ended) is still running when the actors have all stopped; Terminated
// stays open until it has returned, and a later Shutdown names the worker
// pool meanwhile. Without the wait for the pools' workers, Terminated
// closed as the root guardian stopped, with that worker still running.
func TestTerminatedWaitsForTheLastWorker(t *testing.T) {
	before := goroutineStacks()
	hold := holdRootStop{stops: new(atomic.Int32), held: make(chan struct{}), release: make(chan struct{})}
	sys, err := actor.NewSystem(actor.SystemConfig{Workers: 2, KindMiddleware: func(kind string, _ metric.MeterProvider, _ scheduler.Clock) scheduler.Middleware {
		if kind == "guardian" {
			return hold
		}
		return nil
	}})
	require.NoError(t, err)
	inside, release := make(chan struct{}), make(chan struct{})
	blockers[0].set(sys, inside, release)
	<-inside
	require.ErrorIs(t, sys.Shutdown(endedContext()), context.Canceled)
	close(release)
	<-hold.held

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err = sys.Shutdown(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded, "a worker of the pool still runs")
	assert.Equal(t, "actor: stopping the worker pool: context deadline exceeded", err.Error())
	assert.False(t, closed(sys.Terminated()))

	close(hold.release)
	awaitTerminated(t, sys)
	assert.Empty(t, runtimeGoroutines(before))
	goleak.VerifyNone(t)
}
