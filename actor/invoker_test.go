package actor_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/scheduler"
	"github.com/fraktor-go/fraktor/testkit"
)

type msgN struct{ n int }
type boom struct{}

// recordingStrategy records failures and applies a fixed directive.
type recordingStrategy struct {
	mu       sync.Mutex
	failures []actor.Failure
	apply    func(sup actor.Supervisor, f actor.Failure)
}

func (s *recordingStrategy) HandleFailure(sup actor.Supervisor, f actor.Failure) {
	s.mu.Lock()
	s.failures = append(s.failures, f)
	s.mu.Unlock()
	if s.apply != nil {
		s.apply(sup, f)
	}
}

func (s *recordingStrategy) all() []actor.Failure {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]actor.Failure(nil), s.failures...)
}

func throughput(n int) testkit.Option { return func(c *actor.SystemConfig) { c.Throughput = n } }

func panicky(c actor.Context) {
	if _, ok := c.Message().(*boom); ok {
		panic("boom")
	}
}

// S10: an invocation with nothing queued returns Completed{false}.
func TestInvokeEmptyQueueCompleted(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	sys.RunUntilIdle()
	assert.Equal(t, []scheduler.InvokeResult{scheduler.Completed(false)}, sys.TraceOf(pid))
}

// S10: an invocation stops at the throughput hint with Yielded and the
// executor runs it again.
func TestInvokeYieldsAtHint(t *testing.T) {
	sys := testkit.NewManualSystem(t, throughput(4))
	var got []int
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*msgN); ok {
			got = append(got, m.n)
		}
	}))
	sys.RunUntilIdle()
	sys.ResetTrace()
	for i := 0; i < 10; i++ {
		sys.Root().Send(pid, &msgN{i})
	}
	sys.RunUntilIdle()
	assert.Equal(t, []scheduler.InvokeResult{scheduler.Yielded(), scheduler.Yielded(), scheduler.Completed(false)}, sys.TraceOf(pid))
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, got)
}

// S6/S10: a panic is a failure: Failed with RetryAfter = 100ms × 2^n from
// the consecutive-failure count, and the supervisor (here the guardian) is
// notified with the failure.
func TestInvokeFailureNotifiesGuardianWithBackoff(t *testing.T) {
	strat := &recordingStrategy{apply: func(sup actor.Supervisor, f actor.Failure) { sup.ResumeChildren(f.Child) }}
	sys := testkit.NewManualSystem(t, testkit.WithGuardianStrategy(strat))
	pid := sys.Root().Spawn(actor.PropsFromFunc(panicky))
	sys.RunUntilIdle()
	sys.ResetTrace()
	sys.Root().Send(pid, &boom{})
	sys.Root().Send(pid, &boom{})
	sys.RunUntilIdle()
	var failed []scheduler.InvokeResult
	for _, r := range sys.TraceOf(pid) {
		if r.Kind == scheduler.ResultFailed {
			failed = append(failed, r)
		}
	}
	require.Len(t, failed, 2)
	assert.Equal(t, 100*time.Millisecond, failed[0].RetryAfter)
	assert.Equal(t, 200*time.Millisecond, failed[1].RetryAfter, "second consecutive failure doubles")
	var pe *actor.PanicError
	require.ErrorAs(t, failed[0].Err, &pe)
	assert.Equal(t, "boom", pe.Value)

	fs := strat.all()
	require.Len(t, fs, 2)
	assert.True(t, fs[0].Child.Equal(pid))
	assert.Equal(t, 1, fs[0].Consecutive)
	assert.Equal(t, 2, fs[1].Consecutive)
	assert.IsType(t, &boom{}, fs[0].Message)
}

// S10: a suspended actor (failed, no directive yet) answers Suspended to an
// invocation caused by a system message, and processes no user message.
func TestInvokeSuspendedActor(t *testing.T) {
	strat := &recordingStrategy{} // decides nothing: the child stays suspended
	sys := testkit.NewManualSystem(t, testkit.WithGuardianStrategy(strat))
	var handled int
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		panicky(c)
		if _, ok := c.Message().(*msgN); ok {
			handled++
		}
	}))
	sys.Root().Send(pid, &boom{})
	sys.RunUntilIdle()
	sys.ResetTrace()
	sys.Root().Send(pid, &msgN{1})
	sys.RunUntilIdle()
	assert.Empty(t, sys.TraceOf(pid), "a user message does not schedule a suspended mailbox")
	probe := testkit.NewManualProbe(t, sys)
	probe.Watch(pid) // a system message does
	assert.Equal(t, []scheduler.InvokeResult{scheduler.Suspended(scheduler.ReasonActor, scheduler.ResumeExternal())}, sys.TraceOf(pid))
	assert.Equal(t, 0, handled)
}

// S10: suspend → resume: the failure suspends the mailbox, the supervisor's
// Resume directive lets the queued messages run; the failing message is
// dropped and the actor's state is kept.
func TestInvokeSuspendResumeCycle(t *testing.T) {
	resume := actor.OneForOne(10, time.Second, func(error) actor.Directive { return actor.ResumeDirective })
	sys := testkit.NewManualSystem(t, testkit.WithGuardianStrategy(resume))
	var handled []int
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		panicky(c)
		if m, ok := c.Message().(*msgN); ok {
			handled = append(handled, m.n)
		}
	}))
	sys.RunUntilIdle()
	sys.ResetTrace()
	sys.Root().Send(pid, &msgN{1})
	sys.Root().Send(pid, &boom{})
	sys.Root().Send(pid, &msgN{2})
	require.True(t, sys.Step(), "first invocation")
	assert.Equal(t, []int{1}, handled)
	tr := sys.TraceOf(pid)
	require.Len(t, tr, 1)
	assert.Equal(t, scheduler.ResultFailed, tr[0].Kind)
	sys.RunUntilIdle() // the guardian resumes it, then it runs again
	assert.Equal(t, []int{1, 2}, handled)
	tr = sys.TraceOf(pid)
	assert.Equal(t, scheduler.Completed(false), tr[len(tr)-1])
}

type breakMW struct {
	log   *[]string
	name  string
	brk   *bool
	delay time.Duration
}

func (m *breakMW) BeforeInvoke(ctx *scheduler.InvokeContext) scheduler.ControlFlow {
	*m.log = append(*m.log, "before:"+m.name)
	if m.brk != nil && *m.brk {
		ctx.Set(scheduler.MetaResumeAfter, m.delay)
		return scheduler.Break
	}
	return scheduler.Continue
}

func (m *breakMW) AfterInvoke(ctx *scheduler.InvokeContext, res scheduler.InvokeResult) {
	*m.log = append(*m.log, fmt.Sprintf("after:%s:%s:%d", m.name, res.Kind, ctx.Processed))
}

// S3/S4/S10: before-middleware in order, after in reverse on every path; a
// Break suspends with ResumeOn After(d) from the metadata and the scheduler
// resumes the mailbox after d.
func TestInvokeMiddlewareBreakAndOrder(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	var log []string
	brk := false
	var got []int
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*msgN); ok {
			got = append(got, m.n)
		}
	},
		actor.WithInvokeMiddleware(func() scheduler.Middleware { return &breakMW{log: &log, name: "outer"} }),
		actor.WithInvokeMiddleware(func() scheduler.Middleware {
			return &breakMW{log: &log, name: "inner", brk: &brk, delay: 250 * time.Millisecond}
		}),
	))
	sys.RunUntilIdle()
	assert.Equal(t, []string{"before:outer", "before:inner", "after:inner:Completed:0", "after:outer:Completed:0"}, log)

	log, brk = nil, true
	sys.ResetTrace()
	sys.Root().Send(pid, &msgN{1})
	sys.RunUntilIdle()
	assert.Equal(t, []scheduler.InvokeResult{scheduler.Suspended(scheduler.ReasonRateLimit, scheduler.ResumeAfter(250*time.Millisecond))}, sys.TraceOf(pid))
	assert.Equal(t, []string{"before:outer", "before:inner", "after:inner:Suspended:0", "after:outer:Suspended:0"}, log)
	assert.Empty(t, got)

	brk = false
	assert.Equal(t, 0, sys.Advance(249*time.Millisecond))
	assert.Empty(t, got)
	sys.Advance(time.Millisecond)
	assert.Equal(t, []int{1}, got, "resumed after exactly 250ms")
}

// S10 integration: 100 actors × 1,000 messages from several senders, all
// delivered, in per-sender order, on the real worker pool.
func TestManyActorsPerSenderOrder(t *testing.T) {
	sys := testkit.NewSystem(t)
	const actors, senders, perSender = 100, 4, 250 // 1,000 messages per actor
	type tagged struct{ sender, seq int }
	var wg sync.WaitGroup
	wg.Add(actors)
	errs := make(chan error, actors)
	pids := make([]*actor.PID, actors)
	for i := range pids {
		next := make([]int, senders)
		count := 0
		pids[i] = sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
			m, ok := c.Message().(*tagged)
			if !ok {
				return
			}
			if next[m.sender] != m.seq {
				errs <- fmt.Errorf("sender %d: got %d, want %d", m.sender, m.seq, next[m.sender])
			}
			next[m.sender]++
			count++
			if count == senders*perSender {
				wg.Done()
			}
		}))
	}
	var send sync.WaitGroup
	for s := 0; s < senders; s++ {
		send.Go(func() {
			for seq := 0; seq < perSender; seq++ {
				for _, pid := range pids {
					sys.Root().Send(pid, &tagged{s, seq})
				}
			}
		})
	}
	send.Wait()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
