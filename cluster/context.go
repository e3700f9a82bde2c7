package cluster

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster/internal/clusterpb"
	"github.com/fraktor-go/fraktor/remote"
)

// errNotReady: this member has no view yet (retried).
var errNotReady = errors.New("cluster: no view yet")

// Request sends msg to the grain id and waits for its reply of type T,
// activating the grain on its owner when needed and retrying as
// Config.Retry says within ctx (V3.x, B4.x). Without a ctx deadline,
// Config.RequestTimeout applies. Errors: ErrTimeout (deadline or attempts
// exhausted; wraps the last cause), ErrNoSuchKind (no member hosts the kind;
// not retried), ErrShuttingDown (this member is leaving, or began to while
// the request waited),
// *ActivationFailedError, ErrInvalidIdentity, *actor.TypeMismatchError, and
// remote's ErrUnknownType, ErrCodecPanic, ErrSerialize and ErrFrameTooLarge when msg or
// the activation request cannot be encoded (ErrUnknownType for a nil msg,
// wherever the grain runs), and ErrMalformed when the
// grain's PID is longer than remote allows (not retried).
// Messages from one caller to one identity arrive in the order sent while
// the activation lives. On a nil c (Get found no cluster) it fails with
// ErrNotInstalled.
func Request[T any](ctx context.Context, c *Cluster, id Identity, msg any) (T, error) {
	var zero T
	res, err := c.request(ctx, id, msg)
	if err != nil {
		return zero, err
	}
	v, ok := res.(T)
	if !ok {
		return zero, &actor.TypeMismatchError{Want: reflect.TypeFor[T](), Got: res}
	}
	return v, nil
}

// RequestFuture sends msg to the grain id and returns a future of its reply,
// without blocking the caller: grains call other grains with it and PipeTo
// (a worker is never blocked). The future fails like Request, with
// ErrTimeout after timeout (Config.RequestTimeout when timeout ≤ 0). On a
// nil Cluster the future has failed with ErrNotInstalled. As with
// actor.RootContext.RequestFuture, when the worker pools are idle a local
// grain's turn may wait (at most 100 µs) for the caller's Result, Wait or
// ResultContext, which then run it on the calling goroutine; Done and
// PipeTo hand it to the pool.
func (c *Cluster) RequestFuture(id Identity, msg any, timeout time.Duration) *actor.Future {
	if c == nil {
		return actor.FailedFuture(ErrNotInstalled)
	}
	if c.det != nil {
		return c.futureDetached(id, msg, timeout, false)
	}
	return c.requestFuture(id, msg, timeout, nil)
}

// requestFuture is RequestFuture and CallFuture (with reply, which maps
// the reply) on a running cluster. The first attempt's message leaves on
// the caller's goroutine, in the order of the caller's other messages to
// id: to the grain's known PID at once (callWarm, warm_call.go: the
// request's completion completes f, and only a failed attempt starts a
// goroutine, which retries), or queued on the identity's resolution as a
// Send is (queuedRequest), when waiting for the reply and the retries run
// on a tracked goroutine. Were the first attempt sent there too, a Send
// made right after the RequestFuture could reach the grain first
// (TestClusterRequestFutureKeepsOrderWithSends).
func (c *Cluster) requestFuture(id Identity, msg any, timeout time.Duration, reply func(any, error) (any, error)) *actor.Future {
	if timeout <= 0 {
		timeout = c.cfg.RequestTimeout
	}
	if err := c.checkRequest(id, msg); err != nil {
		f := c.root.NewFuture(0)
		f.Complete(nil, err)
		return f
	}
	start := c.now()
	if pid := c.cached(id, start); pid != nil {
		return c.callWarm(id, msg, pid, start, timeout, reply) // warm_call.go
	}
	f := c.root.NewFuture(0)
	first := &queuedRequest{msg: msg, until: time.Now().Add(timeout), attempt: c.cfg.AttemptTimeout}
	c.sendFirst(id, first)
	started := c.goTracked(func() {
		ctx, cancel := c.boundContext(timeout)
		defer cancel()
		res, err := c.requestFrom(ctx, id, msg, first, start)
		if reply != nil {
			res, err = reply(res, err)
		}
		f.Complete(res, err)
	})
	if !started {
		first.abandoned.Store(true)
		f.Complete(nil, ErrShuttingDown)
	}
	return f
}

// Send delivers msg to the grain id without waiting, routed like Request:
// a warm activation gets it at once; otherwise it waits, in order, behind
// the activation under way for id on this member (in the background,
// within Config.RequestTimeout and the retry policy). Messages to one
// identity from one caller arrive in the order sent, Sends and Requests
// alike. Delivery is at most once; what cannot be delivered is logged and
// dropped, as a nil msg is, wherever the grain runs. On a nil Cluster msg
// is dropped (a Debug line on slog's default logger).
func (c *Cluster) Send(id Identity, msg any) {
	if c == nil {
		sendNotInstalled(id)
		return
	}
	if c.det != nil {
		c.sendDetached(id, msg)
		return
	}
	if msg == nil {
		// Request refuses it (errNilRequest): remote cannot encode it, and
		// a queued Send of nil is no Send (flightGroup.join), while a warm
		// local grain got it (TestClusterSendNilIsDropped).
		c.log.Debug("cluster: nil message not sent", "kind", id.Kind)
		return
	}
	if pid := c.cached(id, c.now()); pid != nil {
		c.root.Send(pid, msg)
		return
	}
	if err := c.leaving(); err != nil {
		c.log.Debug("cluster: send not sent", "kind", id.Kind, "err", err)
		return
	}
	if err := id.Validate(); err != nil {
		c.log.Debug("cluster: send not sent", "err", err) // no kind: it may be invalid UTF-8
		return
	}
	c.sendAfterResolve(id, msg, nil)
}

// boundContext is a context that ends after d or when the cluster stops.
func (c *Cluster) boundContext(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(c.ctx, d)
}

func (c *Cluster) leaving() error {
	switch c.Status() {
	case StatusLeaving, StatusStopped:
		return ErrShuttingDown
	}
	if c.remoteGone.Load() {
		return errRemoteEnded
	}
	return nil
}

// request is a blocking request on the caller's ctx (Request, Call). To a
// grain whose PID is known it is requestWarm (warm_call.go), which needs
// the context below only when its first attempt fails.
func (c *Cluster) request(ctx context.Context, id Identity, msg any) (any, error) {
	if c == nil {
		return nil, ErrNotInstalled
	}
	var start time.Time
	if c.det == nil {
		if err := c.checkRequest(id, msg); err != nil {
			return nil, err
		}
		start = c.now()
		if pid := c.cached(id, start); pid != nil {
			return c.requestWarm(ctx, id, msg, pid, start) // warm_call.go
		}
	}
	var cancel context.CancelFunc
	if _, ok := ctx.Deadline(); !ok {
		ctx, cancel = context.WithTimeout(ctx, c.cfg.RequestTimeout)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	// Shutdown ends the request (ErrShuttingDown, see ended), whatever the
	// caller's deadline: the grain it waits for is stopped without
	// answering, and a wait for a flight or a backoff would only delay
	// the same error (TestClusterShutdownEndsInFlightRequest).
	defer context.AfterFunc(c.ctx, cancel)()
	if c.det != nil {
		return c.requestDetached(ctx, id, msg)
	}
	return c.requestFrom(ctx, id, msg, nil, start)
}

// checkRequest refuses a request before anything is sent: an invalid
// identity, a member leaving, a nil message (remote cannot encode it, and
// a local grain would get a nil message it answers nothing to: the caller
// would wait for its deadline, TestClusterNilRequestFailsAtOnce).
func (c *Cluster) checkRequest(id Identity, msg any) error {
	if err := id.Validate(); err != nil {
		return err
	}
	if err := c.leaving(); err != nil {
		return err
	}
	if msg == nil {
		return errNilRequest
	}
	return nil
}

// requestFrom makes the attempts of a request that started at start, the
// first one already sent or queued when first is not nil (requestFuture).
func (c *Cluster) requestFrom(ctx context.Context, id Identity, msg any, first *queuedRequest, start time.Time) (any, error) {
	var last error
	for attempt := 1; ; attempt++ {
		if attempt > 1 {
			c.metrics.retried(id.Kind)
		}
		var (
			pid   *actor.PID
			fut   *actor.Future
			err   error
			tries int32
		)
		if attempt == 1 && first != nil {
			select {
			case <-first.ready:
				pid, fut, err, tries = first.pid, first.fut, first.err, first.tries
			case <-ctx.Done():
				first.abandoned.Store(true)
				return nil, c.ended(id, ctx.Err())
			}
		} else if pid, tries, err = c.resolve(ctx, id); err == nil {
			fut = c.root.RequestFuture(pid, msg, c.attemptTimeout(ctx, c.cfg.AttemptTimeout))
		}
		// Each resolution this attempt waited through is one of the
		// request's attempts, and those beyond this one its retries: a
		// flight led for Sends retries by itself, and a queued first
		// attempt may wait through several flights
		// (TestClusterRequestFutureAttemptsAsRequest,
		// TestClusterRequestWaitingOnSendsCountsItsAttempts).
		for ; tries > 1; tries-- {
			attempt++
			c.metrics.retried(id.Kind)
		}
		if err == nil {
			res, ferr := fut.ResultContext(ctx)
			if ferr == nil {
				c.metrics.requested(id.Kind, c.now().Sub(start))
				return res, nil
			}
			if errors.Is(ferr, actor.ErrMailboxFull) {
				// The grain lives and its mailbox refused the request (a
				// bounded mailbox, or remote's MaxMailboxBacklog for
				// messages from other members): another attempt would
				// only add to its load, and a new resolution would find
				// the same activation. Not retried; the PID stays
				// cached. Before, each of MaxAttempts attempts dropped
				// the PID and asked the owner again, and the caller got
				// ErrTimeout seconds later
				// (TestClusterRequestToFullGrainFailsAtOnce).
				return nil, fmt.Errorf("cluster: %s: %w", id, ferr)
			}
			// Timeout, dead letter, unreachable node: this PID is no good
			// (any more); resolve afresh.
			c.dropCached(id, pid.ID)
			err = c.links.explain(pid.Address, ferr)
			if errors.Is(ferr, remote.ErrBlocked) {
				err = fmt.Errorf("%w: %w", ErrBlocked, ferr)
			}
		}
		if isFatal(err) {
			return nil, err
		}
		last = err
		if ctx.Err() != nil {
			return nil, c.ended(id, last)
		}
		if attempt >= c.cfg.Retry.MaxAttempts {
			// Each request reports its own; a flight reports only for the
			// Sends it drops (land).
			c.throttled(id, attempt, last)
			return nil, fmt.Errorf("%w: %s: %d attempts: %w", ErrTimeout, id, attempt, last)
		}
		if !c.backoff(ctx, attempt, last) {
			return nil, c.ended(id, last)
		}
	}
}

// ended is the error of a request whose ctx ended: ErrTimeout, or
// ErrShuttingDown when Shutdown ended it (RequestFuture's and CallFuture's
// contexts end with the cluster's), not its deadline.
func (c *Cluster) ended(id Identity, last error) error {
	if c.ctx.Err() != nil {
		return fmt.Errorf("%w: %s: %w", ErrShuttingDown, id, last)
	}
	return fmt.Errorf("%w: %s: %w", ErrTimeout, id, last)
}

// retryWarnInterval: at most one retries-exhausted warning is logged per
// interval; the others are counted in the next one (V4.5).
const retryWarnInterval = time.Second

// throttled reports a request whose retries are exhausted: the
// RetryThrottled event names the identity; the log line, throttled, names
// only the kind (the identity may be user data).
func (c *Cluster) throttled(id Identity, attempts int, err error) {
	now := c.now()
	c.sys.EventStream().Publish(&RetryThrottled{Identity: id, Attempts: attempts, Err: err, At: now})
	next := c.warnNext.Load()
	if now.UnixNano() < next || !c.warnNext.CompareAndSwap(next, now.Add(retryWarnInterval).UnixNano()) {
		c.warnSuppressed.Add(1)
		return
	}
	c.log.Warn("cluster: request retries exhausted", "kind", id.Kind, "attempts", attempts, "err", err,
		"suppressed", c.warnSuppressed.Swap(0))
}

// attemptTimeout is one attempt's share of the request's deadline.
func (c *Cluster) attemptTimeout(ctx context.Context, d time.Duration) time.Duration {
	dl, _ := ctx.Deadline()
	return attemptWithin(d, dl)
}

// attemptWithin is an attempt's timeout: at most d, and no later than
// deadline (none when zero), yet at least a millisecond.
func attemptWithin(d time.Duration, deadline time.Time) time.Duration {
	if !deadline.IsZero() {
		d = min(d, time.Until(deadline))
	}
	return max(d, time.Millisecond)
}

// backoff waits the retry policy's delay after failed attempt n (at least
// the owner's retry-after hint), or returns false when ctx ends first.
func (c *Cluster) backoff(ctx context.Context, n int, cause error) bool {
	d := c.cfg.Retry.Delay(n, c.rnd.Float64())
	var hint *retryHint
	if errors.As(cause, &hint) {
		d = max(d, min(hint.after, c.cfg.Retry.Max))
	}
	done := make(chan struct{})
	cancel := c.sys.Clock().AfterFunc(d, func() { close(done) })
	select {
	case <-done:
		return true
	case <-ctx.Done():
		cancel()
		return false
	}
}

// isFatal reports whether a request must not be retried after err: the kind
// is hosted nowhere, the identity is invalid, this member is leaving, the
// grain itself failed to start, or remote cannot encode the message or the
// activation request (an unregistered type, a codec that panicked or failed, an
// envelope larger than a frame, a field longer than remote allows, as the
// PID of a grain whose identity is longer than about 4 KB: every attempt
// would fail alike), or the owner's node could not decode the message or
// encode the grain's reply (its dead letter answer says so: a type not
// registered there, a codec that panicked or failed, bad bytes). An
// activation that failed for a transient reason (a custom lookup wraps
// every activator error in *ActivationFailedError) is retried.
func isFatal(err error) bool {
	if errors.Is(err, actor.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		// A wait that ended is never fatal, whatever cause it carries
		// (resolveOnce adds the last error of the flight it waited for).
		// A timeout is retried whatever it carries: linkFailures.explain
		// adds why the link is down, and a refused handshake's
		// ErrMalformed or ErrFrameTooLarge (something that is not a
		// fraktor node answers there) made it fatal
		// (TestReview6ExplainedTimeoutStaysRetryable).
		return false
	}
	var gs *grainStartError
	return errors.Is(err, ErrNoSuchKind) || errors.Is(err, ErrInvalidIdentity) ||
		errors.As(err, &gs) || errors.Is(err, errLocalShutdown) || errors.Is(err, errRemoteEnded) ||
		errors.Is(err, remote.ErrUnknownType) || errors.Is(err, remote.ErrCodecPanic) ||
		errors.Is(err, remote.ErrSerialize) || errors.Is(err, remote.ErrFrameTooLarge) ||
		errors.Is(err, remote.ErrMalformed)
}

// grainStartError: the owner spawned the grain and its producer or Started
// handler failed (V2.2). Not retried.
type grainStartError struct{ msg string }

func (e *grainStartError) Error() string { return e.msg }

// errLocalShutdown: this member is shutting down (not retried).
var errLocalShutdown = fmt.Errorf("%w: this member is leaving", ErrShuttingDown)

// retryHint carries the owner's retry-after hint with a retryable refusal.
type retryHint struct {
	err   error
	after time.Duration
}

func (h *retryHint) Error() string { return h.err.Error() }
func (h *retryHint) Unwrap() error { return h.err }

// resolve returns the PID of id's activation: a local grain's route or
// the PidCache's entry (V3.1, B4.1), or by asking the owner to activate it.
// Concurrent resolutions of one identity on this member share one
// activation request; tries is as resolveOnce's.
func (c *Cluster) resolve(ctx context.Context, id Identity) (*actor.PID, int32, error) {
	if pid := c.cached(id, c.now()); pid != nil {
		return pid, 0, nil
	}
	if err := c.leaving(); err != nil {
		if err == errRemoteEnded {
			return nil, 0, err
		}
		return nil, 0, errLocalShutdown
	}
	return c.resolveOnce(ctx, id)
}

// activateRemote asks id's owner to activate it and returns the PID and the
// owner's member key; the caller caches it.
func (c *Cluster) activateRemote(ctx context.Context, id Identity) (*actor.PID, string, error) {
	v := c.view.Load()
	if v == nil {
		return nil, "", errNotReady
	}
	owner, err := v.ring.Owner(id)
	if err != nil {
		if errors.Is(err, ErrNoSuchKind) {
			return nil, "", fmt.Errorf("%w: %q", ErrNoSuchKind, id.Kind)
		}
		return nil, "", err
	}
	return c.askOwner(ctx, id, owner, v.topo.Epoch, v.topo.Hash)
}

// activator is the Activator given to a custom IdentityLookup: it asks
// req.Owner's placement actor, within ActivationTimeout, the context of
// the resolution whose Get called it (a request's deadline; see
// lookupCtx) and the cluster's life (Shutdown ends it). Called outside a
// Get, the resolution's context is the cluster's own.
func (c *Cluster) activator(req ActivationRequest) (*actor.PID, error) {
	parent := c.ctx
	if p := c.lookupCtx.Load(); p != nil {
		parent = *p
	}
	ctx, cancel := context.WithTimeout(parent, c.cfg.ActivationTimeout)
	defer cancel()
	if parent != c.ctx {
		defer context.AfterFunc(c.ctx, cancel)()
	}
	pid, _, err := c.askOwner(ctx, req.Identity, req.Owner, req.Epoch, req.TopologyHash)
	return pid, err
}

// askOwner sends an activation request for id to owner's placement actor
// under the view (epoch, hash) and returns the PID and the owner's key.
func (c *Cluster) askOwner(ctx context.Context, id Identity, owner Member, epoch, hash uint64) (*actor.PID, string, error) {
	req := &clusterpb.ActivationRequest{Kind: id.Kind, Id: id.ID, Epoch: epoch, TopologyHash: hash,
		Requester: c.Self().Key()}
	fut := c.root.RequestFuture(actor.NewPID(owner.Address, placementName), req, c.attemptTimeout(ctx, c.cfg.ActivationTimeout))
	res, err := fut.ResultContext(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("activation request to %s: %w", owner.Key(), c.links.explain(owner.Address, err))
	}
	resp, ok := res.(*clusterpb.ActivationResponse)
	if !ok {
		return nil, "", fmt.Errorf("%w: unexpected activation reply %T", ErrOwnershipChanged, res)
	}
	if resp.Kind != id.Kind || resp.Id != id.ID {
		// A late answer to an earlier incarnation of this member at the
		// same address, whose future had the ID this request's has: its
		// PID is another identity's grain. Refused, and asked again.
		return nil, "", fmt.Errorf("%w: activation reply for %s/%s, asked for %s", errMisdirectedReply, resp.Kind, resp.Id, id)
	}
	switch resp.Status {
	case clusterpb.ActivationStatus_ACTIVATION_STATUS_OK:
		return actor.NewPID(resp.PidAddress, resp.PidId), owner.Key(), nil
	case clusterpb.ActivationStatus_ACTIVATION_STATUS_NO_SUCH_KIND:
		return nil, "", ownerRefusal(ErrNoSuchKind, resp.Error)
	case clusterpb.ActivationStatus_ACTIVATION_STATUS_FAILED:
		return nil, "", &ActivationFailedError{Key: id, Err: &grainStartError{msg: resp.Error}}
	case clusterpb.ActivationStatus_ACTIVATION_STATUS_BUSY:
		return nil, "", &retryHint{err: ownerRefusal(errBusy, resp.Error), after: time.Duration(resp.RetryAfterNanos)}
	case clusterpb.ActivationStatus_ACTIVATION_STATUS_FENCED:
		return nil, "", &retryHint{err: ownerRefusal(errFenced, resp.Error), after: time.Duration(resp.RetryAfterNanos)}
	case clusterpb.ActivationStatus_ACTIVATION_STATUS_SHUTTING_DOWN:
		return nil, "", fmt.Errorf("owner %s: %w", owner.Key(), ErrShuttingDown)
	default:
		return nil, "", ownerRefusal(ErrOwnershipChanged, resp.Error)
	}
}

// ownerRefusal is the owner's refusal, whose text came in an
// ActivationResponse, as an error that wraps sentinel. The owner's text
// starts with the sentinel's own when the owner built it by wrapping the
// same sentinel; that prefix is dropped so the caller's error does not say
// it twice ("cluster: activation busy: cluster: activation busy: ...",
// TestActivationRefusalTextNotDoubled).
func ownerRefusal(sentinel error, text string) error {
	prefix := sentinel.Error()
	if text == prefix || text == "" {
		return sentinel
	}
	return fmt.Errorf("%w: %s", sentinel, strings.TrimPrefix(text, prefix+": "))
}

// cached returns the PID of id that callers on this member use without
// asking the owner, or nil: the route to a grain hosted here (published by
// the resolution that activated or found it, withdrawn by dropCached), else
// the PidCache's entry. It does not allocate.
func (c *Cluster) cached(id Identity, now time.Time) *actor.PID {
	if pa := c.pa; pa != nil {
		if pid := pa.core.acts.route(id); pid != nil {
			return pid
		}
	}
	if c.cache != nil {
		if pid, ok := c.cache.Get(id, now); ok {
			return pid
		}
	}
	return nil
}

// publish makes pid, which owner returned for id, the PID callers on this
// member use: the route of a grain hosted here (no PidCache entry: the
// member's table of its activations has it already), else a PidCache entry.
func (c *Cluster) publish(id Identity, pid *actor.PID, owner string) {
	if pa := c.pa; pa != nil && pa.core.acts.publish(id, pid) {
		return
	}
	if pid.Address == c.sys.Address() {
		// A grain of this member that left the table since it answered
		// (it stopped): no entry, which would lead to a dead grain for
		// the PidCache TTL; the next message resolves afresh.
		return
	}
	c.cache.Put(id, pid, owner, c.now())
}

// dropCached withdraws the route to id's local grain and removes id from
// the PidCache, where they still lead to pidID (any PID when pidID is
// empty).
func (c *Cluster) dropCached(id Identity, pidID string) { c.drop(id, pidID, false) }

// dropCachedNoWait is dropCached for the placement actor, which must never
// wait for a custom lookup: a Get holds the lookup while it waits for an
// activation answer, possibly the placement actor's own, which would then
// wait out ActivationTimeout. The lookup's RemovePID runs on a tracked
// goroutine instead (a request's retry needs it done first, so requests
// call dropCached).
func (c *Cluster) dropCachedNoWait(id Identity, pidID string) { c.drop(id, pidID, true) }

func (c *Cluster) drop(id Identity, pidID string, noWait bool) {
	if pa := c.pa; pa != nil {
		pa.core.acts.withdraw(id, pidID)
	}
	if c.custom {
		remove := func() {
			c.withLookup("RemovePID", func() {
				c.lookup.RemovePID(id)
				c.publishLookupEvents()
			})
		}
		if noWait {
			c.goTracked(remove)
		} else {
			remove()
		}
		return
	}
	if pidID != "" {
		if pid, ok := c.cache.Get(id, c.now()); !ok || pid.ID != pidID {
			return
		}
	}
	c.cache.Remove(id)
}
