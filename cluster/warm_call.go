package cluster

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/internal/futurehook"
	"github.com/fraktor-go/fraktor/scheduler"
)

// Warm calls: a request (RequestFuture, CallFuture, Request, Call) to a
// grain whose PID this member knows (Cluster.cached) is one actor request
// to that PID, with no goroutine, context or timer of its own beside it.
//
//   - RequestFuture and CallFuture complete the caller's future from the
//     completion of the request to the grain (warmCall.FutureCompleted, an
//     actor future hook, internal/futurehook). Only a failed attempt starts
//     the goroutine that retries (requestFrom, from that attempt on, as
//     before). The caller's future runs the grain's deferred turn when
//     waited on, as an actor request future does (futurehook.TurnFuture):
//     with the pools idle, Result runs a local grain's turn on the caller.
//     Before, each call started a goroutine that waited for the request
//     (growing its stack under the grain's turn, which it ran), with a
//     context and a timer for the call's timeout: 4–6 µs for a warm local
//     call, most of it that goroutine (docs/benchmarks.md, "Warm grain
//     calls without a goroutine").
//   - Request and Call wait for the request to the grain on the caller's
//     ctx, and only when it fails set up what the retries need (a context
//     that ends at Shutdown, requestFrom).
//
// The request's own timeout is its attempt's (AttemptTimeout, at most the
// call's timeout), which the actor future enforces; the call's deadline
// bounds the retries. Shutdown ends a warm call still waiting as it ended
// the goroutine's context before: every warm call in flight is in a
// sharded set (warmCalls), whose requests Shutdown fails (close), and a
// call made after that fails at once. TestWarmCall* pin it.

// warmShards is the number of shards of warmCalls (a power of two).
const warmShards = 16

// warmCalls is the set of warm calls waiting for their grain, for Shutdown.
type warmCalls struct {
	next   atomic.Uint32
	watch  sync.Once
	shards [warmShards]warmShard
}

type warmShard struct {
	mu     sync.Mutex
	head   *warmNode
	closed bool     // Shutdown has failed the calls: add fails new ones
	_      [48]byte // one shard per cache line
}

// warmNode is a warm call's entry in warmCalls: the request to the grain,
// which close fails at Shutdown.
type warmNode struct {
	shard      *warmShard
	inner      *actor.Future // the request to the grain; set by add
	prev, next *warmNode
	linked     bool // in shard's list (with shard.mu)
	done       bool // removed: add does not link it (with shard.mu)
}

// pick returns a node in one of the shards, in turn.
func (s *warmCalls) pick() *warmShard {
	return &s.shards[s.next.Add(1)%warmShards]
}

// add puts n, whose request to the grain is inner, in the set, unless it
// was removed already (its request completed). When Shutdown has begun
// failing the calls, it fails inner instead, as close would have. The
// first add starts the tracked goroutine that calls close once the
// cluster's context ends (Shutdown); when it cannot start, that context
// has ended already, and add fails inner.
func (s *warmCalls) add(c *Cluster, n *warmNode, inner *actor.Future) {
	s.watch.Do(func() {
		c.goTracked(func() {
			<-c.ctx.Done()
			s.close(c)
		})
	})
	sh := n.shard
	sh.mu.Lock()
	if n.done {
		sh.mu.Unlock()
		return
	}
	if sh.closed || c.ctx.Err() != nil {
		sh.mu.Unlock()
		inner.Complete(nil, shutdownAttemptErr(c))
		return
	}
	n.inner, n.linked = inner, true
	n.next = sh.head
	if sh.head != nil {
		sh.head.prev = n
	}
	sh.head = n
	sh.mu.Unlock()
}

// remove takes n out of the set (its request has completed).
func (s *warmCalls) remove(n *warmNode) {
	sh := n.shard
	sh.mu.Lock()
	n.done = true
	if n.linked {
		n.linked = false
		if n.prev != nil {
			n.prev.next = n.next
		} else {
			sh.head = n.next
		}
		if n.next != nil {
			n.next.prev = n.prev
		}
		n.prev, n.next = nil, nil
	}
	sh.mu.Unlock()
}

// close fails the request of every warm call in the set, as the end of
// the call's context did when a goroutine waited for it: the call then
// retries or ends with ErrShuttingDown (ended). Later adds fail theirs.
func (s *warmCalls) close(c *Cluster) {
	err := shutdownAttemptErr(c)
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		sh.closed = true
		head := sh.head
		sh.head = nil
		for n := head; n != nil; n = n.next {
			n.linked = false
		}
		sh.mu.Unlock()
		// Detached: remove no longer touches their links.
		for n := head; n != nil; {
			next := n.next
			n.inner.Complete(nil, err)
			n = next
		}
	}
}

// shutdownAttemptErr is the error of an attempt that Shutdown ended, as
// actor.Future.ResultContext gave it when the call's context ended.
func shutdownAttemptErr(c *Cluster) error {
	cause := c.ctx.Err()
	if cause == nil {
		cause = context.Canceled
	}
	return fmt.Errorf("%w: %w", actor.ErrTimeout, cause)
}

// warmCall is a RequestFuture or CallFuture to a grain whose PID was known.
type warmCall struct {
	warmNode
	c     *Cluster
	id    Identity
	msg   any
	pid   *actor.PID
	start time.Time // c.now() when made: the request's duration (metrics)
	until time.Time // its deadline (wall clock, as a context's)
	reply func(any, error) (any, error)
	outer *actor.Future // the caller's
}

// callWarm is requestFuture for a grain whose PID is pid: the request
// leaves at once, on the caller's goroutine, and its completion completes
// the caller's future (FutureCompleted).
func (c *Cluster) callWarm(id Identity, msg any, pid *actor.PID, start time.Time, timeout time.Duration, reply func(any, error) (any, error)) *actor.Future {
	w := &warmCall{c: c, id: id, msg: msg, pid: pid, start: start, until: c.wallAt(start).Add(timeout), reply: reply}
	w.shard = c.flights.calls.pick()
	w.outer = futurehook.TurnFuture(c.root, pid).(*actor.Future)
	inner := futurehook.Request(c.root, pid, msg, warmAttempt(c.cfg.AttemptTimeout, timeout), w, w.outer).(*actor.Future)
	c.flights.calls.add(c, &w.warmNode, inner)
	return w.outer
}

// wallAt returns the wall clock's time when c.now() read now: now itself
// when the system's clock is the wall clock (its Now is time.Now), else a
// reading of the wall clock. A warm call saves a clock read with it, which
// costs 250–400 ns on the 2-vCPU VM of docs/benchmarks.md (a clock without
// a fast vDSO read), as much as a fifth of a local call
// (TestWarmCallWallAt).
func (c *Cluster) wallAt(now time.Time) time.Time {
	if _, ok := c.sys.Clock().(scheduler.SystemClock); ok {
		return now
	}
	return time.Now()
}

// warmAttempt is attemptWithin for a deadline timeout from now, without
// reading the clock again: the attempt's timeout is at most the call's.
func warmAttempt(attempt, timeout time.Duration) time.Duration {
	return max(min(attempt, timeout), time.Millisecond)
}

// FutureCompleted implements futurehook.Hook: the request to the grain has
// completed, on the goroutine that completed it (the grain's worker or the
// caller running its turn, a remote reader, the timer queue, Shutdown).
// What runs here is the runtime's own and cannot block or panic: the
// metric, CallFuture's reply mapping (a type check), the caller's future's
// completion (it releases the waiters and sends to the pipes' PIDs), or
// for a failed attempt the start of the goroutine that retries.
func (w *warmCall) FutureCompleted(f, res any, err error) {
	c := w.c
	c.flights.calls.remove(&w.warmNode)
	if err == nil {
		c.metrics.requested(w.id.Kind, c.now().Sub(w.start))
		if w.reply != nil {
			res, err = w.reply(res, nil)
		}
		w.outer.Complete(res, err)
		return
	}
	inner, _ := f.(*actor.Future)
	if !c.goTracked(func() { w.retry(inner) }) {
		w.outer.Complete(nil, ErrShuttingDown)
	}
}

// retry makes the attempts after the failed first one, inner, within the
// call's deadline, as requestFuture's goroutine does (requestFrom drops the
// PID, counts the attempts and ends the call).
func (w *warmCall) retry(inner *actor.Future) {
	c := w.c
	ctx, cancel := context.WithDeadline(c.ctx, w.until)
	defer cancel()
	res, err := c.requestFrom(ctx, w.id, w.msg, &queuedRequest{ready: sentReady, pid: w.pid, fut: inner}, w.start)
	if w.reply != nil {
		res, err = w.reply(res, err)
	}
	w.outer.Complete(res, err)
}

// requestWarm is request for a grain whose PID is pid: the request waits
// on the caller's ctx (bounded by its attempt timeout) with no context of
// its own; only a failed attempt sets up the retries' context (ended by
// Shutdown, as request's is) and goes on with requestFrom.
func (c *Cluster) requestWarm(ctx context.Context, id Identity, msg any, pid *actor.PID, start time.Time) (any, error) {
	wall := c.wallAt(start)
	until, bounded := ctx.Deadline()
	if !bounded {
		until = wall.Add(c.cfg.RequestTimeout)
	}
	n := &warmNode{shard: c.flights.calls.pick()}
	inner := c.root.RequestFuture(pid, msg, warmAttempt(c.cfg.AttemptTimeout, until.Sub(wall)))
	c.flights.calls.add(c, n, inner)
	res, err := inner.ResultContext(ctx)
	c.flights.calls.remove(n)
	if err == nil {
		c.metrics.requested(id.Kind, c.now().Sub(start))
		return res, nil
	}
	var cancel context.CancelFunc
	if bounded {
		ctx, cancel = context.WithCancel(ctx)
	} else {
		ctx, cancel = context.WithDeadline(ctx, until)
	}
	defer cancel()
	defer context.AfterFunc(c.ctx, cancel)()
	return c.requestFrom(ctx, id, msg, &queuedRequest{ready: sentReady, pid: pid, fut: inner}, start)
}
