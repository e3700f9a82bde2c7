package scheduler_test

import (
	"sync"
	"sync/atomic"

	"github.com/fraktor-go/fraktor/scheduler"
)

// fakeRunnable is a scripted runnable: each invocation pops the next result
// from script (or returns Completed{false}), counts runs and records the
// worker it was bound to.
type fakeRunnable struct {
	idx      scheduler.MailboxIndex
	mu       sync.Mutex
	script   []scheduler.InvokeResult
	runs     atomic.Int64
	idles    atomic.Int64
	pending  atomic.Bool // SetIdle reports true once when set
	worker   *scheduler.Worker
	onInvoke func(r *fakeRunnable)
	mw       []scheduler.Middleware
}

func (f *fakeRunnable) InvokeBatch(int) scheduler.InvokeResult {
	f.runs.Add(1)
	if f.onInvoke != nil {
		f.onInvoke(f)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.script) == 0 {
		return scheduler.Completed(false)
	}
	r := f.script[0]
	f.script = f.script[1:]
	return r
}

func (f *fakeRunnable) MailboxIndex() scheduler.MailboxIndex { return f.idx }
func (f *fakeRunnable) AddMiddleware(m scheduler.Middleware) { f.mw = append(f.mw, m) }
func (f *fakeRunnable) BindWorker(w *scheduler.Worker)       { f.worker = w }
func (f *fakeRunnable) Defer()                               {}
func (f *fakeRunnable) Wake() bool                           { return true }
func (f *fakeRunnable) SetIdle() bool {
	f.idles.Add(1)
	return f.pending.Swap(false)
}
