package testkit

import (
	"testing"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// Grain is one activation of a grain kind run without a cluster, for a
// unit test: on a deterministic system (NewManualSystem), with a probe as
// the caller of every message. Inside the grain cluster.IdentityOf answers
// Identity and cluster.FencingTokenOf answers Token; cluster.Passivate
// stops the activation. Use it from the test goroutine.
type Grain struct {
	// Sys is the deterministic system the grain runs on.
	Sys *ManualSystem
	// Probe is the caller: Send's messages come from it and replies
	// arrive in it (ExpectMsg(g.Probe, 0)).
	Probe *Probe
	// PID is the current activation.
	PID *actor.PID
	// Identity is the grain's identity.
	Identity cluster.Identity
	// Token is the current activation's fencing token: Epoch 1, Seq 1 for
	// the first, Seq one greater for each Reactivate.
	Token cluster.FencingToken

	t    testing.TB
	kind cluster.Kind
}

// NewGrain activates one grain of kind under id on a new deterministic
// system and runs it until its Started handler has returned. Cleanup shuts
// the system down and checks for leaked goroutines (as NewManualSystem).
func NewGrain(t testing.TB, kind cluster.Kind, id cluster.Identity, opts ...Option) *Grain {
	t.Helper()
	sys := NewManualSystem(t, opts...)
	if sys == nil {
		return nil
	}
	g := &Grain{Sys: sys, Probe: NewManualProbe(t, sys), Identity: id, t: t, kind: kind,
		Token: cluster.FencingToken{Epoch: 1}}
	g.activate()
	return g
}

func (g *Grain) activate() {
	g.t.Helper()
	g.Token.Seq++
	pid, err := g.Sys.Root().SpawnNamed(g.kind.StandaloneProps(g.Identity, g.Token), g.Identity.String())
	if err != nil {
		g.t.Fatalf("testkit: NewGrain %s: %v", g.Identity, err)
		return
	}
	g.PID = pid
	g.Sys.RunUntilIdle()
}

// Send sends msg to the grain with the probe as sender and runs the
// system until idle; the reply, if any, is in Probe.
func (g *Grain) Send(msg any) {
	g.Probe.Send(g.PID, msg)
	g.Sys.RunUntilIdle()
}

// RequestGrain sends msg to g and returns the grain's reply of type T (failing the
// test if there is none or it has another type).
func RequestGrain[T any](g *Grain, msg any) T {
	g.t.Helper()
	g.Send(msg)
	return ExpectMsg[T](g.Probe, 0)
}

// Reactivate stops the current activation (it receives Stopping) and
// starts a new one of the same identity with the next fencing token, as
// the cluster does after passivation or a handover: state the grain did
// not store is gone.
func (g *Grain) Reactivate() {
	g.t.Helper()
	g.Probe.Watch(g.PID)
	g.Sys.Root().Poison(g.PID)
	g.Probe.ExpectTerminated(g.PID, 0)
	g.activate()
}
