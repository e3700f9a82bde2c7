package testkit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// Grain is a grain kind's activations run without a cluster, for a unit
// test: on a deterministic system (NewManualSystem), with a probe as the
// caller of every message. Inside the grain cluster.IdentityOf answers
// Identity and cluster.FencingTokenOf answers Token; cluster.Passivate
// stops the activation.
//
// As in the cluster, the identity always exists: a message sent after its
// activation stopped (passivated, idle, stopped itself, failed to start)
// starts a new one first, with the next fencing token; an activation that
// received no message for the kind's idle timeout (cluster.WithIdleTimeout,
// else the cluster default, one hour) is passivated when the virtual clock
// gets there (g.Sys.Advance). As in the cluster, one that waits (a
// deferred reply it has not sent, a ReenterAfter continuation that has not
// run) is not idle, and its idle clock starts when the last of that work
// ends. The activations are children of a host actor, as a member's
// grains are of its placement actor, and as there a
// message without a sender that finds the activation gone (one still
// queued at its stop included) goes on to the next activation
// (grain_host.go). Use it from the test goroutine.
//
// The system has a detached cluster (cluster.InstallDetached): the calls
// the grain makes to other grains, through cluster.Get(ctx.System()) or a
// generated client, go to the stubs the test gives (Stub, StubProbe,
// WithGrainStub); a call to a kind without one fails with
// cluster.ErrNoSuchKind. A call to the grain's own identity reaches the
// grain itself, as in the cluster: a Send or a future's request arrives
// in its mailbox behind what is there and is handled on a later turn;
// a blocking one (Request, Call, a client's blocking method) would wait
// for its own caller's turn to end, which in the cluster only its
// deadline ends, so it fails at once with cluster.ErrTimeout, and the
// test with an error that says so (grain_self.go).
type Grain struct {
	// Sys is the deterministic system the grain runs on.
	Sys *ManualSystem
	// Probe is the caller: Send's messages come from it and replies
	// arrive in it (ExpectMsg(g.Probe, 0)).
	Probe *Probe
	// PID is the current activation (or the last one, once it stopped).
	PID *actor.PID
	// Identity is the grain's identity.
	Identity cluster.Identity
	// Token is the current activation's fencing token: Epoch 1, Seq 1 for
	// the first, Seq one greater for each activation after it.
	Token cluster.FencingToken

	t     testing.TB
	kind  cluster.Kind
	idle  time.Duration // ≤ 0: never passivated for idleness
	stubs *grainStubs   // the detached cluster's router (grain_calls.go)
	// host is the parent of the activations (grain_host.go), as the
	// placement actor is in the cluster: it spawns them on its turn and
	// forwards the Sends that find an activation gone.
	host     *actor.PID
	hostAPI  actor.Host // the system's, for SetRedirect
	spawnErr error      // why the host's last spawn failed; under mu

	// What the current activation has done; written on the actor's turn
	// and by the idle timer, read by the test goroutine.
	mu       sync.Mutex
	started  bool      // its Started handler returned
	stopped  bool      // it handled Stopped (or was never spawned)
	startErr error     // why its Started failed, nil if it did not
	last     time.Time // virtual time of its last message, or when its pending work ended
	armed    bool      // an idle check is pending for it
	// pending counts its pending work (deferred replies, continuations),
	// as its activation in a cluster does: while any, it is not idle.
	pending int
	// relays are the future self-calls waiting for an answer, in the
	// order made, so that they are told in that order (grain_self.go).
	relays []*selfRelay
}

// NewGrain activates one grain of kind under id on a new deterministic
// system and runs it until its Started handler has returned. As in the
// cluster, a panic in that handler fails the activation: the grain is
// stopped, not restarted (g.Probe.Watch(g.PID) then answers Terminated,
// and ActivationError says why); a later failure is supervised by the
// system's GuardianStrategy (actor.DefaultStrategy unless an option sets
// one). Cleanup shuts the system down and checks for leaked goroutines (as
// NewManualSystem). A kind or identity that a cluster refuses (see
// checkGrain) fails the test, and NewGrain returns nil.
func NewGrain(t testing.TB, kind cluster.Kind, id cluster.Identity, opts ...Option) *Grain {
	t.Helper()
	if err := checkGrain(kind, id); err != nil {
		t.Fatalf("testkit: NewGrain: %v", err)
		return nil
	}
	g := &Grain{Identity: id, t: t, kind: kind, Token: cluster.FencingToken{Epoch: 1}, idle: kind.IdleTimeout(), stopped: true}
	if g.idle == 0 {
		g.idle = cluster.DefaultConfig().IdleTimeout
	}
	sup := &grainGuardian{g: g}
	all := append(append([]Option(nil), opts...), func(c *actor.SystemConfig) {
		sup.next = c.GuardianStrategy
		if sup.next == nil {
			sup.next = actor.DefaultStrategy()
		}
		c.GuardianStrategy = sup
		c.Extensions = append(slices.Clip(c.Extensions), grainHostInstaller{g})
		g.stubs = stubsOf(c)
		g.stubs.mu.Lock()
		g.stubs.self = g
		g.stubs.mu.Unlock()
	})
	sys := NewManualSystem(t, all...)
	if sys == nil {
		return nil
	}
	g.Sys = sys
	if err := g.startHost(sup); err != nil {
		t.Fatalf("testkit: NewGrain %s: %v", id, err)
		return nil
	}
	g.Probe = NewManualProbe(t, sys)
	g.activate()
	return g
}

// failedStart records err, from the current activation's Started handler
// failing without a panic (a typed grain's Activated returning an error;
// Kind.StandaloneProps calls it on the grain's turn), as the cluster's
// caller gets it: the text only (see activationFailed), err having said
// the identity already.
func (g *Grain) failedStart(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.startErr = &cluster.ActivationFailedError{Key: g.Identity, Err: errors.New(err.Error())}
}

// checkGrain refuses what a cluster refuses: a kind its Config.Validate
// refuses (no name, no props: StandaloneProps would panic on it), an
// identity that is not valid, or one of another kind.
func checkGrain(kind cluster.Kind, id cluster.Identity) error {
	if err := (cluster.Config{Provider: noProvider{}, Kinds: []cluster.Kind{kind}}).Validate(); err != nil {
		return err
	}
	if err := id.Validate(); err != nil {
		return err
	}
	if id.Kind != kind.Name() {
		return fmt.Errorf("%w: identity %s is not of kind %q", cluster.ErrInvalidIdentity, id, kind.Name())
	}
	return nil
}

// noProvider stands in for the Provider that cluster.Config.Validate
// requires when checkGrain checks a kind; it is never joined.
type noProvider struct{}

func (noProvider) Join(context.Context, cluster.Member) (cluster.Membership, error) {
	return nil, errors.New("testkit: no provider")
}

// grainGuardian supervises the top-level actors of a Grain's system as
// the cluster supervises its grains: the activation fails, and is stopped
// rather than restarted, when its Started handler panics before it first
// returned (V2.2); every other failure goes to the configured strategy.
type grainGuardian struct {
	g    *Grain
	next actor.SupervisorStrategy
}

func (s *grainGuardian) HandleFailure(sup actor.Supervisor, f actor.Failure) {
	if g := s.g; g.current(f.Child) && !g.hasStarted() {
		g.mu.Lock()
		g.startErr = activationFailed(g.Identity, f.Err)
		g.mu.Unlock()
		sup.StopChildren(f.Child)
		return
	}
	s.next.HandleFailure(sup, f)
}

// activationFailed is the error a caller in the cluster gets when the
// activation of id failed with err: the owner answers with err's text (it
// crosses the wire in the activation response), so the cause is that text
// only, not err itself (no *actor.PanicError to errors.As): a test that
// relied on more would pass here and fail in the cluster.
func activationFailed(id cluster.Identity, err error) error {
	return &cluster.ActivationFailedError{Key: id, Err: fmt.Errorf("%v: %s: %v", cluster.ErrActivationFailed, id, err)}
}

// current reports whether pid is the current activation.
func (g *Grain) current(pid *actor.PID) bool { return g.PID != nil && pid.Equal(g.PID) }

func (g *Grain) hasStarted() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.started
}

// activate starts the identity's next activation (the host spawns it)
// and runs the system until idle.
func (g *Grain) activate() {
	g.t.Helper()
	g.Sys.Root().Send(g.host, hostSpawn{})
	g.Sys.RunUntilIdle()
	g.mu.Lock()
	err := g.spawnErr
	g.mu.Unlock()
	if err != nil {
		g.t.Fatalf("testkit: NewGrain %s: %v", g.Identity, err)
	}
}

// spawn starts the identity's next activation as a child of the host,
// whose Context c is (it runs on the host's turn), without running it:
// its Started runs on the system's next turn of it.
func (g *Grain) spawn(c actor.Context) error {
	g.mu.Lock()
	g.Token.Seq++ // under mu: an idle check reads it
	g.started, g.stopped, g.startErr, g.armed, g.spawnErr, g.pending = false, false, nil, false, nil, 0
	g.last = g.Sys.Now()
	seq := g.Token.Seq
	g.mu.Unlock()
	onWork := func(delta int) { g.work(seq, delta) }
	props := g.kind.StandalonePropsWithWork(g.Identity, g.Token, onWork, g.failedStart).With(actor.WithReceiveMiddleware(g.track))
	pid, err := c.SpawnNamed(props, g.Identity.String())
	if err != nil {
		g.mu.Lock()
		g.stopped, g.spawnErr = true, err
		g.mu.Unlock()
		return err
	}
	g.PID = pid
	return nil
}

// ensureActive starts a new activation when the current one has stopped,
// as a message to the identity does in the cluster. It reports whether an
// activation is running; when not, ActivationError says why.
func (g *Grain) ensureActive() bool {
	g.t.Helper()
	if g.isStopped() {
		g.activate()
	}
	return g.ActivationError() == nil
}

// isStopped reports whether the current activation has ended.
func (g *Grain) isStopped() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stopped
}

// ActivationError returns nil when the current activation's Started
// handler returned, and the *cluster.ActivationFailedError a caller in the
// cluster would get (errors.Is cluster.ErrActivationFailed) when it
// failed.
func (g *Grain) ActivationError() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.startErr
}

// track is the activation's receive middleware: it records that Started
// returned, every message (the idle clock restarts; a self-call's request
// is taken), and Stopped.
func (g *Grain) track(next actor.ReceiveFunc) actor.ReceiveFunc {
	return func(c actor.Context) {
		pid := c.Self()
		switch c.Message().(type) {
		case *actor.Stopped:
			// Marked even when the handler panics: the activation is gone.
			defer g.ended(pid)
		case *actor.Stopping:
		default:
			g.touch(pid, c.Sender())
		}
		next(c)
		if _, ok := c.Message().(*actor.Started); ok {
			g.begun(pid)
		}
	}
}

func (g *Grain) touch(pid, sender *actor.PID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.current(pid) {
		return
	}
	g.last = g.Sys.Now()
	if sender == nil {
		return
	}
	for _, r := range g.relays {
		if r.pid.Equal(sender) && r.seq == g.Token.Seq {
			r.taken = true
		}
	}
}

// ended records that the current activation stopped and tells the relays
// of the self-calls sent to it (grain_self.go): it takes no message any
// more. Their turn comes after this one, once the activation's name is
// free for the next.
func (g *Grain) ended(pid *actor.PID) {
	g.mu.Lock()
	if !g.current(pid) {
		g.mu.Unlock()
		return
	}
	g.stopped = true
	var tell []*actor.PID
	for _, r := range g.relays {
		if r.seq == g.Token.Seq {
			tell = append(tell, r.pid)
		}
	}
	g.mu.Unlock()
	for _, p := range tell {
		g.Sys.Root().Send(p, selfEnded{})
	}
}

// work counts delta pieces of pending work of the activation with token
// seq seq (Kind.StandalonePropsWithWork's onWork: on the grain's turn, or
// on the goroutine that sends a deferred reply). As in the cluster, its
// idle clock starts when its last pending work ends. An earlier
// activation's (a deferred reply sent after its stop) no longer counts.
func (g *Grain) work(seq uint64, delta int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.Token.Seq != seq {
		return
	}
	g.pending += delta
	if g.pending == 0 {
		g.last = g.Sys.Now()
	}
}

// begun records that pid's Started handler returned (again, after a
// restart) and starts its idle clock once.
func (g *Grain) begun(pid *actor.PID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.current(pid) {
		return
	}
	g.started = true
	if g.idle > 0 && !g.armed {
		g.armed = true
		seq := g.Token.Seq
		g.Sys.Clock.AfterFunc(g.idle, func() { g.idleCheck(pid, seq) })
	}
}

// idleCheck passivates pid, the activation with token seq seq, when it
// received no message for the idle timeout and has no pending work (a
// deferred reply not sent, a continuation that has not run) and has had
// none for that long, and looks again when that is due otherwise (an idle
// timeout on while work is pending: its end restarts the clock, work); as
// the cluster's placement actor does, it lets the messages already queued
// run first. Every activation has the same PID (it is named after the
// identity), so the check of an activation that stopped knows it by its
// token: otherwise it would go on beside the next activation's and poison
// that one a second time, a dead letter the cluster never makes.
func (g *Grain) idleCheck(pid *actor.PID, seq uint64) {
	g.mu.Lock()
	if !g.current(pid) || g.Token.Seq != seq || g.stopped {
		g.mu.Unlock()
		return
	}
	left := g.idle
	if g.pending == 0 {
		left -= g.Sys.Now().Sub(g.last)
	}
	if left > 0 {
		g.Sys.Clock.AfterFunc(left, func() { g.idleCheck(pid, seq) })
		g.mu.Unlock()
		return
	}
	g.mu.Unlock()
	g.Sys.Root().Poison(pid)
}

// Send sends msg to the grain with the probe as sender, as a request
// (cluster.Request, RequestFuture) is sent, and runs the system until
// idle; the reply, if any, is in Probe. When the activation has stopped, a
// new one is started first; when that one fails its Started handler, msg
// is not delivered (as in the cluster, where the caller gets the
// ActivationError). A nil msg is not delivered and fails the test: the
// cluster refuses a request of nil (ErrNilRequest). For a cluster.Send,
// which has no sender, use Tell.
func (g *Grain) Send(msg any) {
	g.t.Helper()
	if msg == nil {
		g.t.Errorf("testkit: Grain.Send %s: %v", g.Identity, ErrNilRequest)
		return
	}
	g.deliver(msg)
}

// ErrNilRequest is the error cluster.Request, RequestFuture, Call and
// CallFuture give for a nil message (it wraps remote.ErrUnknownType):
// the cluster hands a grain no nil message, and neither does Grain (Send,
// RequestGrain and CallGrain refuse it; Tell drops it, as cluster.Send
// does).
var ErrNilRequest = fmt.Errorf("%w: <nil> is not registered (a nil request)", remote.ErrUnknownType)

// deliver is Send, reporting whether msg reached an activation: false when
// the one started for it failed its Started handler. An activation error
// set after msg was delivered (the method panicked and the restart failed)
// is not msg's: msg's reply is in Probe, and that failed restart stopped
// the activation, so the next message starts a new one.
func (g *Grain) deliver(msg any) bool {
	g.t.Helper()
	if !g.ensureActive() {
		return false
	}
	g.Probe.Send(g.PID, msg)
	g.Sys.RunUntilIdle()
	return true
}

// RequestGrain sends msg to g and returns the grain's reply of type T
// (failing the test if there is none, it has another type, or the
// activation failed to start).
func RequestGrain[T any](g *Grain, msg any) T {
	g.t.Helper()
	if msg == nil {
		var zero T
		g.t.Fatalf("testkit: RequestGrain %s: %v", g.Identity, ErrNilRequest)
		return zero
	}
	if !g.deliver(msg) {
		var zero T
		g.t.Fatalf("testkit: RequestGrain %s: %v", g.Identity, g.ActivationError())
		return zero
	}
	return ExpectMsg[T](g.Probe, 0)
}

// Reactivate stops the current activation (it receives Stopping, after
// the messages already queued) and starts a new one of the same identity
// with the next fencing token, as the cluster does after passivation or a
// handover: state the grain did not store is gone. What Probe holds stays
// there.
func (g *Grain) Reactivate() {
	g.t.Helper()
	if g.isStopped() {
		g.activate()
		return
	}
	// A future waits for the stop, not g.Probe: the probe may hold replies
	// the test has not taken yet, and they stay there for it.
	f := g.Sys.Root().PoisonFuture(g.PID)
	g.Sys.RunUntilIdle()
	select {
	case <-f.Done():
	default:
		g.t.Fatalf("testkit: Reactivate %s: the activation %s did not stop", g.Identity, g.PID)
		return
	}
	// The future also fails when the pill was refused or dropped (a full
	// bounded mailbox): the activation still runs, and a new one beside
	// it would be a second activation of the identity
	// (TestReactivateRefusedPillFails).
	if err := f.Wait(); err != nil {
		g.t.Fatalf("testkit: Reactivate %s: the activation %s did not stop: %v", g.Identity, g.PID, err)
		return
	}
	if g.isStopped() {
		// A self-call's relay may have started the next activation in
		// that run already: a request the stopped one had not taken
		// (grain_self.go).
		g.activate()
	}
}

// CallGrain sends req to g, a typed grain (a kind generated by
// protoc-gen-fraktor-grain), and returns its reply as T (a nil req is
// ErrNilRequest and a nil message pointer arrives as an empty message, as
// with cluster.Call; a proto2 request with a required field unset is
// remote.ErrSerialize, as with cluster.Call), or the grain
// method's error as *cluster.GrainError (a panic in the method is
// cluster.CodeInternal), or the *cluster.ActivationFailedError when the
// activation started for req failed to start. A restart that fails after
// req ran does not change req's reply, and it stops the activation: the
// next call starts a new one, as in the cluster
// (TestCallGrainReplyBeforeFailedRestart). It fails the test when no reply
// came.
func CallGrain[T any](g *Grain, req any) (T, error) {
	g.t.Helper()
	if req == nil {
		var zero T
		return zero, ErrNilRequest
	}
	if m, ok := req.(proto.Message); ok {
		if !m.ProtoReflect().IsValid() {
			// A nil message pointer crosses the wire as an empty message,
			// and cluster.Call hands the grain an empty one wherever it
			// runs.
			m = m.ProtoReflect().Type().New().Interface()
			req = m
		}
		if err := proto.CheckInitialized(m); err != nil {
			// A proto2 message with a required field unset cannot be
			// encoded: cluster.Call refuses it wherever the grain runs,
			// and so does this (TestCallGrainRefusesIncompleteProto2Request).
			var zero T
			return zero, fmt.Errorf("%w: proto %q: %w", remote.ErrSerialize, m.ProtoReflect().Descriptor().FullName(), err)
		}
	}
	if !g.deliver(req) {
		var zero T
		return zero, g.ActivationError()
	}
	return cluster.GrainReply[T](ExpectMsg[any](g.Probe, 0))
}

// Tell sends msg to the grain without a sender, as cluster.Send does
// (Send's messages come from Probe, as a Request's), and runs the system
// until idle. When the activation has stopped, a new one is started
// first; when that one fails its Started handler, msg is dropped, as the
// cluster drops a Send it cannot deliver.
func (g *Grain) Tell(msg any) {
	g.t.Helper()
	if msg == nil || !g.ensureActive() {
		return
	}
	g.Sys.Root().Send(g.PID, msg)
	g.Sys.RunUntilIdle()
}
