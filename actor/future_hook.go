package actor

import (
	"time"

	"github.com/fraktor-go/fraktor/internal/futurehook"
)

// Hooked futures (internal/futurehook) are how the cluster completes a
// grain call's future from the completion of the request to the grain,
// instead of a goroutine per call that waits for the request and then
// completes the call (cluster/warm_call.go). Not a public API: the hook
// runs on whatever goroutine completes the future (a worker, a remote
// reader, the timer queue), where user code must not run.
//
// A hooked future is a Future with its hook beside it in one allocation.
// The Future has no spare field for the hook (it fills its 224-byte size
// class, TestFutureIDInline), so the hook is found through the one
// interface the future owns and only its own code sets: the target of its
// timer node, which is the hookedFuture itself (its fireTimer and
// closeTimer are the Future's) instead of the Future. The future's PID and
// its registry entry still name the *Future, which dead letters and the
// host's ProcessStopped recognise. complete calls the hook last.
// TestHookedFuture* pin it.

// hookedFuture is a request future that calls hook when it completes.
type hookedFuture struct {
	Future
	hook futurehook.Hook
}

func init() {
	futurehook.Install(futurehook.Funcs{
		Request: func(root, pid, msg any, timeout time.Duration, h futurehook.Hook, turn any) any {
			t, _ := turn.(*Future)
			return root.(*RootContext).requestHooked(pid.(*PID), msg, timeout, h, t)
		},
		TurnFuture: func(root, target any) any {
			return root.(*RootContext).turnFuture(target.(*PID))
		},
	})
}

// requestHooked is RequestFuture whose future calls h once it completes;
// turn (nil: the request's own future) is the future whose waiter may run
// its deferred turn.
func (r *RootContext) requestHooked(pid *PID, msg any, timeout time.Duration, h futurehook.Hook, turn *Future) *Future {
	hf := &hookedFuture{hook: h}
	hf.tm.target = hf // before startFuture: it keeps a target already set
	f := r.sys.startFuture(&hf.Future, pid, timeout)
	if turn == nil {
		turn = f
	}
	r.sys.sendDeferred(f, turn, pid, msg)
	return f
}

// turnFuture is NewFuture(0) that runs target's deferred turn when waited
// on (futurehook.TurnFuture). target is set after the registration, so the
// future is not indexed as a request to target's node; nothing can
// complete it before it is returned but a system that has stopped, on this
// goroutine.
func (r *RootContext) turnFuture(target *PID) *Future {
	f := r.sys.newFuture(nil, 0)
	f.target = target
	return f
}

// hookOf returns the hook of f, whose timer node's target is t, or nil.
func hookOf(t timerTarget) futurehook.Hook {
	if hf, ok := t.(*hookedFuture); ok {
		return hf.hook
	}
	return nil
}
