package testkit

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// GrainStub stands in for the grains of one kind that a grain under test
// calls: it gets each call's identity and message and returns the reply,
// or the error the caller gets as is. Return cluster.NewGrainError(code,
// ...) to answer as a typed grain method's error (the caller gets that
// *cluster.GrainError), or a cluster error to play the cluster failing
// (cluster.ErrTimeout, an *cluster.ActivationFailedError). A panic is
// what a grain method's panic is: the caller gets a *cluster.GrainError
// of cluster.CodeInternal. It runs on the caller's turn, on the goroutine
// that drives the system; a Send's reply is dropped.
type GrainStub func(id cluster.Identity, msg any) (any, error)

// grainStubs is the cluster.GrainRouter behind the detached cluster that
// NewGrain (or WithGrainStub) installs: by kind name, a stub function or a
// probe. A call to a kind with neither fails with cluster.ErrNoSuchKind,
// as a call to a kind no member hosts does.
type grainStubs struct {
	mu    sync.Mutex
	kinds map[string]stubRoute
	self  *Grain // the grain under test (NewGrain); nil for a system
}

type stubRoute struct {
	fn    GrainStub
	probe *Probe
}

func (s *grainStubs) set(kind string, r stubRoute) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kinds[kind] = r
}

// RouteGrain implements cluster.GrainRouter.
func (s *grainStubs) RouteGrain(call *cluster.GrainCall) {
	s.mu.Lock()
	r, ok := s.kinds[call.Identity.Kind]
	self := s.self
	s.mu.Unlock()
	switch {
	case self != nil && call.Identity == self.Identity:
		// The grain under test is the grain called, stub or no stub
		// (grain_self.go).
		self.selfCall(call)
	case !ok:
		call.Fail(fmt.Errorf("%w: %q (testkit: no stub for it: Grain.Stub, Grain.StubProbe, WithGrainStub)", cluster.ErrNoSuchKind, call.Identity.Kind))
	case r.probe != nil && call.Blocking():
		// The caller holds the goroutine that drives the system, which the
		// probe's test would need to answer: the call could only wait out
		// its deadline in real time, then fail. It fails now, and the test
		// is told which stub it needs.
		r.probe.t.Errorf("testkit: a blocking call to %s (Request, Call, a client's blocking method) cannot be answered by the probe that stands in for kind %q: the caller holds the goroutine that runs the system; stub the kind with Grain.Stub, or call the Future variant", call.Identity, call.Identity.Kind)
		call.Fail(fmt.Errorf("%w: %s: a probe cannot answer a blocking call", cluster.ErrTimeout, call.Identity))
	case r.probe != nil:
		r.probe.sys.Root().Send(r.probe.PID(), call)
	default:
		// A panic goes on up to the detached cluster, which answers
		// CodeInternal as for a grain method's panic.
		reply, err := r.fn(call.Identity, call.Message)
		if err != nil {
			call.Fail(err)
			return
		}
		call.Reply(reply)
	}
}

// stubsInstaller is the detached cluster's installer with its router, so
// that the options and NewGrain find the one they add stubs to.
type stubsInstaller struct {
	actor.ExtensionInstaller
	stubs *grainStubs
}

// stubsOf returns the stubs of the detached cluster in cfg, adding one
// when there is none. When cfg installs a cluster of its own, the stubs
// returned are not installed (they answer nothing).
func stubsOf(cfg *actor.SystemConfig) *grainStubs {
	s := &grainStubs{kinds: map[string]stubRoute{}}
	for _, e := range cfg.Extensions {
		if si, ok := e.(*stubsInstaller); ok {
			return si.stubs
		}
		if e.Name() == cluster.Name {
			return s
		}
	}
	// Clipped: the slice may be the caller's (WithConfig), whose array
	// must not change under it.
	cfg.Extensions = append(slices.Clip(cfg.Extensions), &stubsInstaller{cluster.InstallDetached(s), s})
	return s
}

// WithGrainStub makes fn answer the calls to the grains of kind (a kind
// name, as AccountKindName) made on the system through cluster.Get, by a
// detached cluster (cluster.InstallDetached) that the option installs.
// For NewGrain, it stubs the calls the grain makes while it activates;
// Grain.Stub and Grain.StubProbe change the stubs later. It also works
// for NewSystem and NewManualSystem, on a system without a cluster.
func WithGrainStub(kind string, fn GrainStub) Option {
	return func(c *actor.SystemConfig) { stubsOf(c).set(kind, stubRoute{fn: fn}) }
}

// Stub makes fn answer the grain's calls to the grains of kind (a kind
// name) from now on, in place of an earlier stub or probe of kind. A
// call of the grain to its own identity is not stubbed: it reaches the
// grain itself, as in the cluster (see Grain). Calls
// go through cluster.Get(ctx.System()) and the generated clients alike:
// Request, Call and the blocking client methods get fn's answer at once;
// RequestFuture, CallFuture and the clients' Future methods complete
// with it (a grain's PipeTo delivers it on the next run of the system).
func (g *Grain) Stub(kind string, fn GrainStub) {
	g.stubs.set(kind, stubRoute{fn: fn})
}

// StubProbe makes a new probe stand in for the grains of kind (a kind
// name) from now on: each call the grain makes to one of them arrives in
// it as a *cluster.GrainCall, which the test checks and answers
// (GrainCall.Reply, GrainCall.Fail; ExpectGrainCall takes one), or lets
// time out: a future's timeout is virtual time (g.Sys.Advance). A Send
// arrives too (GrainCall.OneWay). A blocking call (Request, Call, a
// client's blocking method) cannot be answered from the probe, as its
// caller holds the goroutine that runs the system (the grain's turn, or
// the test's own): it fails at once with cluster.ErrTimeout, and the
// test with an error that says so. Use Stub for those.
func (g *Grain) StubProbe(kind string) *Probe {
	p := NewManualProbe(g.t, g.Sys)
	g.stubs.set(kind, stubRoute{probe: p})
	return p
}

// ExpectGrainReply takes the next message of p, waiting up to timeout as
// ExpectMsg does, and returns it as a typed grain's reply: a T, or the
// grain method's error as *cluster.GrainError (what cluster.Call
// returns). It is for the replies of requests sent with Grain.Send, which
// reach g.Probe as they travel between members: an error as the runtime's
// wire message, which ExpectMsg[*cluster.GrainError] does not match
// (cluster.GrainReply converts it). It fails the test when no message came
// or the message is neither.
func ExpectGrainReply[T any](p *Probe, timeout time.Duration) (T, error) {
	p.t.Helper()
	var zero T
	wait := p.normalize(timeout, DefaultTimeout)
	r, ok := p.take(wait)
	if !ok {
		p.fatalf("ExpectGrainReply[%s]: got no message %s", typeName[T](), p.within(wait))
		return zero, nil
	}
	v, err := cluster.GrainReply[T](r.Msg)
	var mismatch *actor.TypeMismatchError
	if errors.As(err, &mismatch) {
		p.fatalf("ExpectGrainReply[%s]: got %s instead", typeName[T](), r)
		return zero, nil
	}
	return v, err
}

// ExpectGrainCall takes the next message of p, a probe that stands in for
// grains (Grain.StubProbe), waiting up to timeout as ExpectMsg does, and
// fails the test unless it is a call whose message is a T. It returns
// the call, to answer, and its message.
func ExpectGrainCall[T any](p *Probe, timeout time.Duration) (*cluster.GrainCall, T) {
	p.t.Helper()
	call := ExpectMsg[*cluster.GrainCall](p, timeout)
	var zero T
	if call == nil {
		return nil, zero
	}
	msg, ok := call.Message.(T)
	if !ok {
		p.fatalf("testkit: ExpectGrainCall: the call to %s carries %T, not %T", call.Identity, call.Message, zero)
		return call, zero
	}
	return call, msg
}
