package testkit_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/scheduler"
	"github.com/fraktor-go/fraktor/testkit"
)

type boom struct{}

// ticker sends probe its receive-timeout count every d of idleness.
func ticker(p *testkit.Probe, d time.Duration) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		n := 0
		return actor.ReceiveFunc(func(c actor.Context) {
			switch c.Message().(type) {
			case *actor.Started:
				c.SetReceiveTimeout(d)
			case *actor.ReceiveTimeout:
				n++
				c.Send(p.PID(), n)
			}
		})
	})
}

// Advance fires receive timeouts at their virtual deadline, not before.
func TestAdvanceFiresReceiveTimeout(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	p := testkit.NewManualProbe(t, sys)
	sys.Root().Spawn(ticker(p, time.Second))
	sys.Advance(999 * time.Millisecond)
	p.ExpectNoMsg(0)
	sys.Advance(time.Millisecond)
	p.ExpectMsgEqual(1, 0)
	assert.Equal(t, time.Second, sys.Elapsed())

	// A virtual timeout moves the clock only as far as the message: the
	// next timeout is due at 2 s, so a 5 s wait stops there.
	assert.Equal(t, 2, testkit.ExpectMsg[int](p, 5*time.Second))
	assert.Equal(t, 2*time.Second, sys.Elapsed())

	// ExpectNoMsg(d) waits d of virtual time, so it sees the timeout due
	// within d and names it.
	rec := newRecorder(t)
	q := testkit.NewProbe(rec, sys.System)
	sys.Root().Spawn(ticker(q, 300*time.Millisecond))
	q.ExpectNoMsg(299 * time.Millisecond)
	assert.Empty(t, rec.Fatals())
	q.ExpectNoMsg(time.Millisecond)
	assert.Contains(t, rec.lastFatal(), "ExpectNoMsg: got int 1 within 1ms of virtual time (now 2.3s)")
}

// FishForMsg in deterministic mode fishes across virtual time.
func TestFishForMsgVirtualTime(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	rec := newRecorder(t)
	p := testkit.NewProbe(rec, sys.System)
	sys.Root().Spawn(ticker(p, 100*time.Millisecond))
	got := testkit.FishForMsg(p, func(n int) bool { return n == 3 }, time.Second)
	assert.Equal(t, 3, got)
	assert.Equal(t, 300*time.Millisecond, sys.Elapsed(), "stops at the deadline of the match")
	assert.Empty(t, rec.Fatals())

	testkit.FishForMsg(p, func(n int) bool { return n > 100 }, 250*time.Millisecond)
	assert.Equal(t, 550*time.Millisecond, sys.Elapsed(), "a failed fish waited the whole timeout")
	assert.Contains(t, rec.lastFatal(), "FishForMsg[int]: no match within 250ms of virtual time (now 550ms); skipped [int 4; int 5]")
}

// crasher panics on *boom and reports its lifecycle to p.
func crasher(p *testkit.Probe) *actor.Props {
	return actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started:
			c.Send(p.PID(), "started")
		case *boom:
			panic("boom")
		case string:
			c.Send(p.PID(), c.Message())
		}
	})
}

// Advance fires backoff restarts (S6: 100 ms, then 200 ms for the next
// consecutive failure), and the trace records the Failed results.
func TestAdvanceFiresBackoffRestart(t *testing.T) {
	sys := testkit.NewManualSystem(t, testkit.WithGuardianStrategy(actor.ExponentialBackoff()))
	p := testkit.NewManualProbe(t, sys)
	pid := sys.Root().Spawn(crasher(p))
	p.ExpectMsgEqual("started", 0)
	sys.Root().Send(pid, &boom{})
	sys.Root().Send(pid, "queued while failed")
	p.ExpectNoMsg(99 * time.Millisecond)
	p.ExpectMsgEqual("started", time.Millisecond)
	assert.Equal(t, 100*time.Millisecond, sys.Elapsed())
	p.ExpectMsgEqual("queued while failed", 0)

	sys.Root().Send(pid, &boom{}) // a success came between: the count restarted
	p.ExpectMsgEqual("started", time.Second)
	assert.Equal(t, 200*time.Millisecond, sys.Elapsed())
	sys.Root().Send(pid, &boom{}) // second consecutive failure: 200 ms
	p.ExpectMsgEqual("started", time.Second)
	assert.Equal(t, 400*time.Millisecond, sys.Elapsed())

	var failed []scheduler.InvokeResult
	for _, r := range sys.TraceOf(pid) {
		if r.Kind == scheduler.ResultFailed {
			failed = append(failed, r)
		}
	}
	require.Len(t, failed, 3)
	assert.Equal(t, []time.Duration{100 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond},
		[]time.Duration{failed[0].RetryAfter, failed[1].RetryAfter, failed[2].RetryAfter})
	var pe *actor.PanicError
	require.True(t, errors.As(failed[0].Err, &pe))
	assert.Equal(t, "boom", pe.Value)
}

func TestStepAndTrace(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	assert.False(t, sys.Step(), "idle after start")
	sys.ResetTrace()
	var got []int
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if n, ok := c.Message().(int); ok {
			got = append(got, n)
		}
	}))
	sys.Root().Send(pid, 1)
	sys.Root().Send(pid, 2)
	assert.Empty(t, got, "nothing runs until the test says so")
	require.True(t, sys.Step())
	assert.Equal(t, []int{1, 2}, got, "one invocation handles the batch")
	assert.False(t, sys.Step())
	assert.Equal(t, 0, sys.RunUntilIdle())

	tr := sys.Trace()
	require.Len(t, tr, 1)
	assert.True(t, tr[0].PID.Equal(pid))
	assert.Equal(t, "0s $1 Completed{ReadyHint:false}", tr[0].String())
	assert.Equal(t, []string{"0s $1 Completed{ReadyHint:false}"}, sys.TraceStrings())
	assert.Equal(t, []scheduler.InvokeResult{scheduler.Completed(false)}, sys.TraceOf(pid))

	sys.Advance(1500 * time.Millisecond)
	sys.Root().Send(pid, 3)
	sys.RunUntilIdle()
	assert.Equal(t, "1.5s $1 Completed{ReadyHint:false}", sys.Trace()[1].String())
	sys.ResetTrace()
	assert.Empty(t, sys.Trace())
	assert.Equal(t, time.Unix(0, 0).Add(1500*time.Millisecond).UTC(), sys.Now())
}

// PIDs come from per-system counters (a child's ID holds its parent's
// mailbox index): every fresh system names its
// actors alike, which is what makes traces comparable across runs.
func TestPIDsRepeatAcrossSystems(t *testing.T) {
	ids := func() []string {
		var out []string
		t.Run("system", func(t *testing.T) {
			sys := testkit.NewManualSystem(t)
			p := testkit.NewManualProbe(t, sys)
			a := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
				if _, ok := c.Message().(*actor.Started); ok {
					c.Send(p.PID(), c.Spawn(actor.PropsFromFunc(func(actor.Context) {})))
				}
			}))
			child := testkit.ExpectMsg[*actor.PID](p, 0)
			out = []string{p.PID().ID, a.ID, child.ID}
		})
		return out
	}
	first := ids()
	assert.Equal(t, []string{"probe$1", "$2", "#5/$3"}, first)
	assert.Equal(t, first, ids())
}

func TestNewManualSystemKeepsItsDispatcher(t *testing.T) {
	sys := testkit.NewManualSystem(t, testkit.WithConfig(actor.SystemConfig{Name: "mine", Throughput: 1}))
	assert.Equal(t, "mine", sys.Name())
	assert.Same(t, sys.Exec, sys.Dispatcher(), "WithConfig does not replace the manual executor")
	assert.Same(t, sys.Clock, sys.System.Clock())

	// Throughput 1 reaches the executor: one message per invocation (the
	// second completes: nothing is left after it).
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	sys.RunUntilIdle()
	sys.ResetTrace()
	sys.Root().Send(pid, 1)
	sys.Root().Send(pid, 2)
	sys.RunUntilIdle()
	assert.Equal(t, []scheduler.InvokeResult{scheduler.Yielded(), scheduler.Completed(false)}, sys.TraceOf(pid))
}

func TestNewSystemReportsBadConfig(t *testing.T) {
	rec := newRecorder(t)
	assert.Nil(t, testkit.NewSystem(rec, func(c *actor.SystemConfig) { c.Workers = -1 }))
	assert.Contains(t, rec.lastFatal(), "testkit: NewSystem: actor: invalid config")
}

// NewSystem's cleanup reports a goroutine that the test left running.
func TestNewSystemReportsLeaks(t *testing.T) {
	rec := &recorderTB{TB: t}
	testkit.NewSystem(rec)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-stop
	}()
	rec.finish() // the test's cleanup: shutdown, then the leak check
	close(stop)
	<-done
	require.Len(t, rec.Errors(), 1)
	assert.Contains(t, rec.Errors()[0], "testkit: leaked goroutines")
	assert.Contains(t, rec.Errors()[0], "TestNewSystemReportsLeaks")

	clean := &recorderTB{TB: t}
	testkit.NewSystem(clean)
	clean.finish()
	assert.Empty(t, clean.Errors())
}

// A manual system that never becomes idle (an actor that messages itself on
// every turn) fails its test once, and RunUntilIdle returns, instead of
// hanging the test for ever.
func TestManualSystemNeverIdleFails(t *testing.T) {
	rec := newRecorder(t)
	ms := testkit.NewManualSystem(rec, func(c *actor.SystemConfig) { c.Throughput = 1 })
	stop := false
	pid := ms.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(string); ok && !stop {
			c.Send(c.Self(), "again")
		}
	}))
	ms.Root().Send(pid, "again")
	n := ms.RunUntilIdle()
	require.Equal(t, testkit.ManualBusyLimit, n)
	ms.RunUntilIdle() // still busy: reported once
	rec.mu.Lock()
	errs := append([]string(nil), rec.errors...)
	rec.mu.Unlock()
	require.Len(t, errs, 1)
	require.Contains(t, errs[0], "still busy")
	stop = true
	ms.RunUntilIdle()
}
