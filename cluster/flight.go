package cluster

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

// flightGroup keeps at most one resolution of an identity under way on this
// member (the "flight"). Concurrent Requests for the identity wait for it
// instead of sending activation requests of their own, and Sends made while
// it is under way queue on it; the flight's leader delivers them in order
// and only then publishes the PID in the PidCache, so no later message from
// this member overtakes them.
type flightGroup struct {
	mu sync.Mutex
	m  map[Identity]*flight
	// waiting, when not nil (tests only), is called when a resolution
	// (resolveOnce) begins to wait for a flight it does not lead.
	waiting func(Identity)
	// calls: the requests in flight to grains whose PID was known, which
	// need no flight (warm_call.go).
	calls warmCalls
}

type flight struct {
	done  chan struct{}
	pid   *actor.PID
	err   error
	sends []any // Sends queued behind the resolution, in order
	// goneAddr, goneID: the PID of an activation of the identity that
	// ended while the flight was under way (terminated), or that a
	// message the flight delivered could not reach (forward); land does
	// not publish it, and hands the Sends still queued to a new flight
	// instead of delivering them there.
	goneAddr, goneID string
	// landing is the PID the flight resolved, set when it begins to
	// deliver its Sends.
	landing *actor.PID
	// tries: the resolutions made for it (queuedRequest.tries).
	tries int32
	// lastErr: the error of its last resolution that failed (guarded by
	// the group's mu), for the callers whose wait for it ends first.
	lastErr error
	// carried: it took over queued requests from an earlier flight, whose
	// tries started there (spent).
	carried bool
	// exhausted: the attempts of leadSends that used up Retry.MaxAttempts
	// (0 when it did not); land publishes RetryThrottled for the Sends it
	// then drops.
	exhausted int
}

// samePID reports whether a and b name one process (b may be nil).
func samePID(a, b *actor.PID) bool {
	return b != nil && a.ID == b.ID && a.Address == b.Address
}

// terminated records, on the flight of id under way if there is one, that
// the activation with the PID (address, pidID) ended, as its member's
// ActivationTerminated broadcast says. The flight may have been answered
// with that PID before the activation ended: published after the
// broadcast's own drop found nothing to drop, the PidCache entry would lead
// to the dead grain for the TTL, and every Send from this member would be a
// dead letter until a request failed on it. (A new activation on the same
// member has the same PID: then the next message resolves it again.)
func (g *flightGroup) terminated(id Identity, address, pidID string) {
	g.mu.Lock()
	if f := g.m[id]; f != nil {
		f.goneAddr, f.goneID = address, pidID
	}
	g.mu.Unlock()
}

// join returns the flight for id under way and false, or a new one that the
// caller now leads and true; queued, when not nil, is queued on the flight.
// When there is no flight but c knows id's PID (Cluster.cached), it returns
// that PID instead: a flight publishes its PID (local route or PidCache
// entry) before it ends, under the same lock, so a caller that finds
// neither flight nor PID cannot overtake what an earlier flight delivers.
//
// gone, when not nil, is a PID of id that queued could not reach
// (forward): join never returns it, and when the flight under way is
// delivering there, it marks it gone, so that the flight hands queued and
// the rest of its Sends to a new resolution instead.
func (g *flightGroup) join(id Identity, queued any, c *Cluster, now time.Time, gone *actor.PID) (*flight, bool, *actor.PID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.joinLocked(id, queued, c, now, gone)
}

// joinLocked is join with g.mu held.
func (g *flightGroup) joinLocked(id Identity, queued any, c *Cluster, now time.Time, gone *actor.PID) (*flight, bool, *actor.PID) {
	if g.m == nil {
		g.m = map[Identity]*flight{}
	}
	f := g.m[id]
	switch {
	case f == nil:
		if pid := c.cached(id, now); pid != nil && !samePID(pid, gone) {
			return nil, false, pid
		}
	case f.landing != nil && samePID(f.landing, gone):
		f.goneAddr, f.goneID = gone.Address, gone.ID
	}
	lead := f == nil
	if lead {
		f = &flight{done: make(chan struct{})}
		g.m[id] = f
	}
	if queued != nil {
		if q, ok := queued.(*queuedRequest); ok {
			q.tries -= f.tries // see queuedRequest.tries
		}
		f.sends = append(f.sends, queued)
	}
	return f, lead, nil
}

// resolveOnce makes one activation request for id, shared by every caller
// that asks while it is under way. tries is the number of resolutions the
// caller waited through (0 when id's PID was known): one when it led, or
// those the flight it joined made from then on, each one of its attempts
// (queuedRequest.tries; a flight led for Sends retries by itself).
func (c *Cluster) resolveOnce(ctx context.Context, id Identity) (*actor.PID, int32, error) {
	g := &c.flights
	g.mu.Lock()
	f, lead, pid := g.joinLocked(id, nil, c, c.now(), nil)
	var from int32
	if f != nil {
		from = f.tries
	}
	g.mu.Unlock()
	if pid != nil {
		return pid, 0, nil
	}
	if !lead {
		if g.waiting != nil {
			g.waiting(id)
		}
		select {
		case <-f.done:
			return f.pid, f.tries - from, f.err // no tries after done
		case <-ctx.Done():
			// Say why the flight has not landed yet, as far as this member
			// knows: the error of its last attempt that failed, or why the
			// last connection to the owner failed (a refused handshake,
			// while the first attempt still waits for its timeout); the
			// caller's ErrTimeout wraps it. Before, such a request read
			// only "context deadline exceeded"
			// (TestRequestWaitingOnAnotherResolutionNamesTheRefusedHandshake).
			g.mu.Lock()
			last := f.lastErr
			g.mu.Unlock()
			if last != nil {
				return nil, 0, fmt.Errorf("%w; the resolution it waited for: %w", ctx.Err(), last)
			}
			if addr, why := c.ownerLinkFailure(id); why != nil {
				return nil, 0, fmt.Errorf("%w (no connection to %s: %w)", ctx.Err(), addr, why)
			}
			return nil, 0, ctx.Err()
		}
	}
	start := c.now()
	pid, owner, err := c.activateOnce(ctx, id)
	if err == nil {
		c.metrics.resolved(id.Kind, c.now().Sub(start))
	}
	g.tried(f, err)
	c.land(id, f, pid, owner, err, false)
	return pid, 1, err
}

// activateOnce resolves id once: through the owner's placement actor, or
// through a custom lookup's Get (serialized; it caches what it resolves).
// A custom lookup is user code: a panic in its Get is an activation error
// (retried like the lookup's own errors), not a panic of the goroutine
// resolving, which may be the runtime's (RequestFuture, Send) and whose
// flight would otherwise never land.
func (c *Cluster) activateOnce(ctx context.Context, id Identity) (pid *actor.PID, owner string, err error) {
	if !c.custom {
		return c.activateRemote(ctx, id)
	}
	c.lookupMu.Lock()
	defer c.lookupMu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			pid, owner, err = nil, "", &ActivationFailedError{Key: id, Err: fmt.Errorf("identity lookup panicked: %v", r)}
		}
	}()
	lctx := ctx // escapes only on this path, not the placement actor's
	c.lookupCtx.Store(&lctx)
	defer c.lookupCtx.Store(nil)
	pid, err = c.lookup.Get(id, c.now())
	c.publishLookupEvents()
	return pid, "", err
}

// sendAfterResolve queues msg behind the resolution of id, starting one
// (with retries, in the background) when none is under way; gone, when not
// nil, is a PID msg could not reach (see join).
func (c *Cluster) sendAfterResolve(id Identity, msg any, gone *actor.PID) {
	f, lead, pid := c.flights.join(id, msg, c, c.now(), gone)
	switch {
	case pid != nil:
		c.root.Send(pid, msg)
	case lead:
		c.leadSends(id, f)
	}
}

// leadSends resolves id with the retry policy for the Sends queued on f.
func (c *Cluster) leadSends(id Identity, f *flight) {
	started := c.goTracked(func() {
		ctx, cancel := c.boundContext(c.cfg.RequestTimeout)
		defer cancel()
		var (
			pid   *actor.PID
			owner string
			err   error
		)
		for attempt := 1; ; attempt++ {
			pid, owner, err = c.activateOnce(ctx, id)
			c.flights.tried(f, err)
			if err == nil || isFatal(err) {
				break
			}
			if attempt >= c.cfg.Retry.MaxAttempts {
				f.exhausted = attempt // land publishes RetryThrottled
				break
			}
			if !c.flights.expire(f, c.cfg.Retry.MaxAttempts, err) {
				break // it carried only requests, and they ended
			}
			if !c.backoff(ctx, attempt, err) {
				break
			}
		}
		c.land(id, f, pid, owner, err, true)
	})
	if !started {
		c.land(id, f, nil, "", ErrShuttingDown, true)
	}
}

// tried counts a resolution that f made (flight.tries) and keeps its
// error, if it failed (flight.lastErr).
func (g *flightGroup) tried(f *flight, err error) {
	g.mu.Lock()
	f.tries++
	if err != nil {
		f.lastErr = err
	}
	g.mu.Unlock()
}

// expire fails, with err, the queued requests f carries from an earlier
// flight that have used up max attempts with f's tries so far: f's own
// retries count from its start, theirs from their first resolution
// (TestClusterQueuedRequestMovedOnCountsFirstResolution). It reports
// whether f still has anything queued.
func (g *flightGroup) expire(f *flight, max int, err error) bool {
	g.mu.Lock()
	if !f.carried {
		g.mu.Unlock()
		return true
	}
	var out []*queuedRequest
	f.sends, out = spent(f.sends, f.tries, max)
	left := len(f.sends) > 0
	g.mu.Unlock()
	for _, q := range out {
		q.fail(err)
	}
	return left
}

// spent removes from sends, in place, the queued requests whose tries
// plus extra, the tries of the flight they wait on, reach max, and returns
// them with extra added (they leave that flight). With g.mu.
func spent(sends []any, extra int32, max int) (kept []any, out []*queuedRequest) {
	kept = sends[:0]
	for _, m := range sends {
		if q, ok := m.(*queuedRequest); ok && int(q.tries+extra) >= max {
			q.tries += extra
			out = append(out, q)
			continue
		}
		kept = append(kept, m)
	}
	clear(sends[len(kept):])
	return kept, out
}

// land ends flight f: on success it delivers the queued Sends in order
// (including those queued while it delivers), publishes the PID (see
// publish) and releases the waiters. On failure the waiters get err; queued Sends are handed to a
// new flight that retries for them, unless final, when they are dropped.
func (c *Cluster) land(id Identity, f *flight, pid *actor.PID, owner string, err error, final bool) {
	g := &c.flights
	for {
		g.mu.Lock()
		if err == nil {
			f.landing = pid
			if len(f.sends) > 0 && pid.ID == f.goneID && pid.Address == f.goneAddr {
				// The activation is gone (its Sends came back as dead
				// letters, or its member said it ended): resolve again.
				err, final = fmt.Errorf("%w: %s: grain %s is gone", actor.ErrDeadLetter, id, pid), false
			}
		}
		sends := f.sends
		f.sends = nil
		for _, m := range sends {
			if q, ok := m.(*queuedRequest); ok {
				q.tries += f.tries // see queuedRequest.tries
			}
		}
		if err != nil && len(sends) > 0 && !final {
			// The requests whose attempts f used up end here; the others
			// move on, their tries so far counted (expire).
			var out []*queuedRequest
			sends, out = spent(sends, 0, c.cfg.Retry.MaxAttempts)
			f.err = err
			close(f.done)
			if len(sends) == 0 {
				delete(g.m, id)
				g.mu.Unlock()
			} else {
				next := &flight{done: make(chan struct{}), sends: sends, carried: true}
				g.m[id] = next
				g.mu.Unlock()
				c.leadSends(id, next)
			}
			for _, q := range out {
				q.fail(err)
			}
			return
		}
		if err != nil || len(sends) == 0 {
			if err == nil && !c.custom && (pid.ID != f.goneID || pid.Address != f.goneAddr) {
				c.publish(id, pid, owner)
			}
			delete(g.m, id)
			f.pid, f.err = pid, err
			close(f.done)
			g.mu.Unlock()
			if err != nil && len(sends) > 0 {
				n := 0
				for _, m := range sends {
					switch q := m.(type) {
					case *queuedRequest:
						q.fail(err) // its requester retries or gives up
						continue
					case *passivateMsg:
						c.root.Send(c.placement, q) // the passivation stands
						continue
					}
					n++
				}
				if n > 0 {
					// Queued requests report their own (requestFrom).
					if f.exhausted > 0 {
						c.throttled(id, f.exhausted, err)
					}
					c.log.Debug("cluster: sends not delivered", "kind", id.Kind, "count", n, "err", err)
				}
			}
			return
		}
		g.mu.Unlock()
		for _, m := range sends {
			switch q := m.(type) {
			case *queuedRequest:
				q.send(c, pid)
			case *passivateMsg:
				c.root.Send(c.placement, q) // after the Sends queued ahead of it
			default:
				c.root.Send(pid, m)
			}
		}
	}
}

// passivateAfterSends asks the placement actor to passivate the grain pid
// of id (Passivate, after the turn that called it). When a flight for id
// holds Sends, or is delivering them, the request joins its queue and
// leaves once they are posted: a grain whose first turn runs before its
// PID reached this member's cache has its own Sends of that turn queued
// on the flight that activated it, and the placement actor's pill then
// overtook them, which reached the next activation instead of this one
// (TestDiffSendsAfterPassivate failed 1 to 3 runs in 50).
func (c *Cluster) passivateAfterSends(id Identity, pid *actor.PID) {
	m := &passivateMsg{pid: pid}
	g := &c.flights
	g.mu.Lock()
	if f := g.m[id]; f != nil && (f.landing != nil || len(f.sends) > 0) {
		f.sends = append(f.sends, m)
		g.mu.Unlock()
		return
	}
	g.mu.Unlock()
	c.root.Send(c.placement, m)
}

// queuedRequest is the first attempt of a RequestFuture or CallFuture
// (requestFuture): sent at once to a known PID, or queued on the
// identity's flight among the Sends, in the caller's order. Once ready is
// closed, pid and fut are the attempt (sent to pid), or err why the flight
// could not resolve the identity.
type queuedRequest struct {
	msg     any
	until   time.Time     // the request's deadline (wall clock, as its ctx)
	attempt time.Duration // Config.AttemptTimeout
	ready   chan struct{} // set by sendFirst
	pid     *actor.PID
	fut     *actor.Future
	err     error
	// tries: the resolutions made by the flights it was queued on, each
	// one of the request's attempts, so that its requester makes no more
	// than Retry.MaxAttempts in all. join subtracts the flight's tries so
	// far and land adds the flight's tries when it takes q (then q moves
	// to a new flight, counting from 0, or ends): O(1) per resolution,
	// however many requests are queued. With g.mu; read after ready. An
	// int32 beside abandoned: the struct stays in its 96-byte size class.
	tries int32
	// abandoned: the requester has given up (its deadline, Shutdown); a
	// flight that lands later does not send it.
	abandoned atomic.Bool
}

// sentReady is the ready of a queuedRequest sent on its caller's
// goroutine: closed already, so that the warm path makes no channel.
var sentReady = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// send sends the request to pid, the identity's activation, with what is
// left of its deadline as the attempt's timeout (at most attempt).
func (q *queuedRequest) send(c *Cluster, pid *actor.PID) {
	if !q.abandoned.Load() {
		q.pid, q.fut = pid, c.root.RequestFuture(pid, q.msg, attemptWithin(q.attempt, q.until))
	} else {
		q.err = actor.ErrTimeout
	}
	close(q.ready)
}

// sendNow is send on the caller's goroutine, before anyone waits on ready.
func (q *queuedRequest) sendNow(c *Cluster, pid *actor.PID) {
	q.pid, q.fut, q.ready = pid, c.root.RequestFuture(pid, q.msg, attemptWithin(q.attempt, q.until)), sentReady
}

// fail ends the attempt without sending: the flight failed with err.
func (q *queuedRequest) fail(err error) {
	q.err = err
	close(q.ready)
}

// sendFirst sends q, a request's first attempt, to id's known PID, or
// queues it on id's resolution (starting one when none is under way), as
// Send does with a message.
func (c *Cluster) sendFirst(id Identity, q *queuedRequest) {
	if pid := c.cached(id, c.now()); pid != nil {
		q.sendNow(c, pid)
		return
	}
	q.ready = make(chan struct{}) // before join: the flight may land at once
	f, lead, pid := c.flights.join(id, q, c, c.now(), nil)
	switch {
	case pid != nil:
		q.ready = nil
		q.sendNow(c, pid)
	case lead:
		c.leadSends(id, f)
	}
}

// ownerLinkFailure returns the address of id's owner in the current view
// and why the last connection to it failed, nil when none is on record.
func (c *Cluster) ownerLinkFailure(id Identity) (string, error) {
	v := c.view.Load()
	if v == nil {
		return "", nil
	}
	owner, err := v.ring.Owner(id)
	if err != nil {
		return "", nil
	}
	return owner.Address, c.links.why(owner.Address)
}
