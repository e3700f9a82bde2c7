package middleware_test

import (
	"errors"

	"github.com/fraktor-go/fraktor/scheduler"
	"github.com/fraktor-go/fraktor/scheduler/middleware"
)

// testInvoker is a scheduler.Runnable standing in for the actor invoker. It
// follows the contract the real invoker implements (S3, S4): before-chain;
// Break → Suspended{RateLimit, After(ctx.ResumeAfter())}; at most
// min(hint, MetaBatchLimit) user messages; Processed; after-chain on every
// path. Its mailbox holds backlog messages and never gets new ones.
type testInvoker struct {
	idx         scheduler.MailboxIndex
	clock       scheduler.Clock
	chain       *scheduler.CompositeMiddleware
	ictx        scheduler.InvokeContext
	backlog     int
	processed   int
	ignoreLimit bool        // behave like an invoker that does not know MetaBatchLimit
	failNext    error       // the next batch fails after processing one message
	work        func(n int) // runs while n messages are processed (e.g. advance the clock)
	results     []scheduler.InvokeResult
}

func newTestInvoker(idx scheduler.MailboxIndex, clock scheduler.Clock, backlog int, ms ...scheduler.Middleware) *testInvoker {
	v := &testInvoker{idx: idx, clock: clock, backlog: backlog, chain: scheduler.NewComposite()}
	for _, m := range ms {
		v.AddMiddleware(m)
	}
	return v
}

var errActor = errors.New("actor failed")

func (v *testInvoker) InvokeBatch(hint int) scheduler.InvokeResult {
	v.ictx.Reset(v.idx, hint, v.clock.Now())
	res := v.invoke(hint)
	v.chain.AfterInvoke(&v.ictx, res)
	v.results = append(v.results, res)
	return res
}

func (v *testInvoker) invoke(hint int) scheduler.InvokeResult {
	if v.chain.BeforeInvoke(&v.ictx) == scheduler.Break {
		return scheduler.Suspended(scheduler.ReasonRateLimit, scheduler.ResumeAfter(v.ictx.ResumeAfter()))
	}
	n := min(v.backlog, hint)
	if limit, ok := middleware.BatchLimit(&v.ictx); ok && !v.ignoreLimit {
		n = min(n, limit)
	}
	if v.failNext != nil {
		n = min(n, 1)
	}
	if v.work != nil {
		v.work(n)
	}
	v.backlog -= n
	v.processed += n
	v.ictx.Processed = n
	if err := v.failNext; err != nil {
		v.failNext = nil
		return scheduler.Failed(err, scheduler.Backoff(0))
	}
	switch {
	case n == 0:
		return scheduler.Completed(false)
	case n >= hint:
		return scheduler.Yielded()
	}
	return scheduler.Completed(v.backlog > 0)
}

func (v *testInvoker) MailboxIndex() scheduler.MailboxIndex { return v.idx }
func (v *testInvoker) AddMiddleware(m scheduler.Middleware) { v.chain.Add(m) }
func (v *testInvoker) BindWorker(*scheduler.Worker)         {}
func (v *testInvoker) SetIdle() bool                        { return false }
func (v *testInvoker) Defer()                               {}
func (v *testInvoker) Wake() bool                           { return true }
