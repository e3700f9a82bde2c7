package router

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

// scatterGather is a router's scatter-gather-first-completed strategy.
type scatterGather struct {
	timeout time.Duration
	seq     atomic.Uint64
}

func (sg *scatterGather) route(r *router, set *routeeSet, msg any, sender *actor.PID) {
	if len(set.pids) == 0 {
		r.refuse(msg, sender, reasonNoRoutees)
		return
	}
	if sender == nil {
		r.broadcast(set, msg, nil) // nobody to answer
		return
	}
	g := &gather{r: r, msg: msg, requester: sender, seq: sg.seq.Add(1)}
	g.pending.Store(int64(len(set.pids)))
	pid, err := r.sys.RegisterProcess(r.self.Load().ID+"$sg"+strconv.FormatUint(g.seq, 36), g)
	if err != nil {
		r.refuse(msg, sender, err)
		return
	}
	g.pid = pid
	if !r.track(g) {
		r.sys.UnregisterProcess(pid)
		r.refuse(msg, sender, reasonStopped)
		return
	}
	g.mu.Lock()
	if !g.ended {
		g.stop = r.sys.Clock().AfterFunc(sg.timeout, g.expire)
	}
	g.mu.Unlock()
	for _, p := range set.pids {
		r.deliver(p, msg, pid)
	}
}

// track records g as waiting; false when the router has stopped.
func (r *router) track(g *gather) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	if r.gathers == nil {
		r.gathers = make(map[*gather]struct{})
	}
	r.gathers[g] = struct{}{}
	return true
}

func (r *router) untrack(g *gather) {
	r.mu.Lock()
	delete(r.gathers, g)
	r.mu.Unlock()
}

// gather is the Process that collects the answers to one scatter-gather
// request: the first passes on to the requester, the rest are dropped.
// It is registered under its own ID while it waits.
type gather struct {
	r         *router
	msg       any
	requester *actor.PID
	pid       *actor.PID
	seq       uint64       // the router's count of requests when this one came
	pending   atomic.Int64 // routees that may still answer
	done      atomic.Bool

	mu    sync.Mutex
	ended bool
	stop  func() bool
}

var _ actor.Process = (*gather)(nil)

// finish ends the wait once; the caller that gets true reports the outcome.
func (g *gather) finish() bool {
	if !g.done.CompareAndSwap(false, true) {
		return false
	}
	g.mu.Lock()
	g.ended = true
	stop := g.stop
	g.mu.Unlock()
	if stop != nil {
		stop()
	}
	g.r.sys.UnregisterProcess(g.pid)
	g.r.untrack(g)
	return true
}

// SendUser implements actor.Process: an answer. A *DeadLetterResponse
// (what a remote routee's node sends back when the routee is gone) counts
// that routee out; when every routee has, the request fails with
// ErrAllRouteesFailed. (A local routee that is gone sends nothing back;
// the group drops it when its Terminated arrives.)
func (g *gather) SendUser(_ *actor.PID, msg any, from *actor.PID) {
	if _, ok := msg.(*actor.DeadLetterResponse); ok {
		if g.pending.Add(-1) == 0 {
			g.fail(reasonAllFailed)
		}
		return
	}
	if g.finish() {
		g.r.deliver(g.requester, msg, from)
	}
}

// SendSystem implements actor.Process; a collector has no system protocol.
func (g *gather) SendSystem(*actor.PID, actor.SystemMessage) {}

// StopProcess implements actor.Process: the request fails.
func (g *gather) StopProcess(*actor.PID) { g.fail(reasonStopped) }

func (g *gather) expire() { g.fail(reasonTimeout) }

func (g *gather) fail(reason error) {
	if g.finish() {
		g.r.refuse(g.msg, g.requester, reason)
	}
}
