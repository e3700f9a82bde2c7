package testkit

import (
	"context"
	"errors"
	"strconv"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// The host of a Grain's activations: an actor whose children they are, as
// a cluster member's grains are the children of its placement actor. It
// spawns each activation on its turn, and its actor.Redirect takes the
// messages without a sender (Sends, a future's PipeTo, a Tell) that reach
// an activation that is gone, those still queued in its mailbox when it
// stopped included, and sends them to the identity's next activation,
// started for them, as the cluster forwards them (docs/cluster.md,
// Forwarding): with cluster.ForwardHeader counting the forwards, at most
// maxForwards times, never a PoisonPill nor a message with a sender
// (TestDiffMessagesQueuedAtStop, TestDiffPipedReplyAfterStop).

// maxForwards is how many times the cluster forwards one message that
// finds its grain gone; past it the message is a dead letter.
const maxForwards = 3

// Messages of the host.
type (
	hostSpawn   struct{}               // start the next activation (Grain.activate)
	hostRelay   struct{ r *selfRelay } // start it if needed, then send r's request
	hostForward struct{ msg any }      // start it if needed, then send msg
)

// grainHostInstaller is an extension that only hands the Grain the
// system's actor.Host, for SetRedirect.
type grainHostInstaller struct{ g *Grain }

func (grainHostInstaller) Name() string       { return "testkit.grain" }
func (grainHostInstaller) Requires() []string { return nil }
func (grainHostInstaller) Enabled() bool      { return true }
func (grainHostInstaller) Validate() error    { return nil }
func (i grainHostInstaller) Install(_ context.Context, host actor.Host) (actor.Extension, error) {
	i.g.hostAPI = host
	return noExtension{}, nil
}

// startHost spawns the host, supervising its children with sup, and
// installs its redirect.
func (g *Grain) startHost(sup actor.SupervisorStrategy) error {
	pid, err := g.Sys.Root().SpawnNamed(actor.PropsFromFunc(g.hostReceive, actor.WithSupervisor(sup)), "grains")
	if err != nil {
		return err
	}
	g.host = pid
	return g.hostAPI.SetRedirect(pid, g.redirect)
}

func (g *Grain) hostReceive(c actor.Context) {
	switch m := c.Message().(type) {
	case hostSpawn:
		if g.isStopped() {
			_ = g.spawn(c) // Grain.activate reports the error
		}
	case hostRelay:
		if g.isStopped() {
			if err := g.spawn(c); err != nil {
				m.r.spawnFailed(err)
				return
			}
		}
		m.r.post()
	case hostForward:
		if g.isStopped() && g.spawn(c) != nil {
			return // dropped, as the cluster drops a Send it cannot deliver
		}
		g.Sys.Root().Send(g.PID, m.msg)
	}
}

// redirect is the host's actor.Redirect: it takes a message without a
// sender for the grain's activation that is gone and has the host send it
// to the next one, as the cluster's forward does. It runs on the goroutine
// that found the activation gone, and only sends.
func (g *Grain) redirect(_ *actor.PID, name string, msg any, sender *actor.PID) bool {
	if sender != nil || name != g.Identity.String() {
		return false
	}
	inner, h := actor.UnwrapEnvelope(msg)
	if _, ok := inner.(*actor.PoisonPill); ok {
		return false
	}
	n := 0
	if v := h.Get(cluster.ForwardHeader); v != "" {
		var err error
		if n, err = strconv.Atoi(v); errors.Is(err, strconv.ErrRange) {
			return false // too many to count: past the bound
		} else if err != nil || n < 0 {
			n = 0
		}
	}
	if n >= maxForwards {
		return false
	}
	fh := make(actor.Header, len(h)+1)
	for k, v := range h {
		fh[k] = v
	}
	fh.Set(cluster.ForwardHeader, strconv.Itoa(n+1))
	g.Sys.Root().Send(g.host, hostForward{&actor.MessageEnvelope{Header: fh, Message: inner}})
	return true
}
