package actor_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

type seen struct {
	msg any
	hdr actor.Header
}

func recordTo(ch chan<- seen) actor.ReceiveFunc {
	return func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started, *actor.Stopping, *actor.Stopped:
			return
		}
		ch <- seen{msg: c.Message(), hdr: c.MessageHeader()}
	}
}

// Receive sees the message a MessageEnvelope carries and its header; the
// next message without an envelope has no header.
func TestMessageEnvelopeUnwrappedBeforeReceive(t *testing.T) {
	sys := testkit.NewSystem(t)
	got := make(chan seen, 4)
	pid := sys.Root().Spawn(actor.PropsFromFunc(recordTo(got)))
	sys.Root().Send(pid, &actor.MessageEnvelope{Header: actor.Header{"k": "v"}, Message: "one"})
	sys.Root().Send(pid, "two")
	first, second := <-got, <-got
	require.Equal(t, "one", first.msg)
	require.Equal(t, actor.Header{"k": "v"}, first.hdr)
	require.Equal(t, "two", second.msg)
	require.Nil(t, second.hdr)
}

// A receive middleware sees the unwrapped message too, and a request's
// answer in an envelope completes the future with the message.
func TestMessageEnvelopeMiddlewareAndFuture(t *testing.T) {
	sys := testkit.NewSystem(t)
	mwSaw := make(chan any, 2)
	mw := func(next actor.ReceiveFunc) actor.ReceiveFunc {
		return func(c actor.Context) {
			if _, ok := c.Message().(string); ok {
				mwSaw <- c.Message()
			}
			next(c)
		}
	}
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if s, ok := c.Message().(string); ok {
			c.Respond(&actor.MessageEnvelope{Header: c.MessageHeader(), Message: s + "!"})
		}
	}, actor.WithReceiveMiddleware(mw)))
	res, err := actor.Request[string](context.Background(), sys.Root(), pid, &actor.MessageEnvelope{Header: actor.Header{"a": "b"}, Message: "hi"})
	require.NoError(t, err)
	require.Equal(t, "hi!", res)
	require.Equal(t, "hi", <-mwSaw)
}

// Stash and Forward keep the header of the message they hand on.
func TestMessageEnvelopeStashAndForwardKeepHeader(t *testing.T) {
	sys := testkit.NewSystem(t)
	got := make(chan seen, 4)
	sink := sys.Root().Spawn(actor.PropsFromFunc(recordTo(got)))
	released := false
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message() {
		case "hold":
			if !released {
				c.Stash()
				return
			}
			c.Forward(sink)
		case "release":
			released = true
			c.UnstashAll()
		case "fwd":
			c.Forward(sink)
		}
	}))
	env := func(m, h string) any { return &actor.MessageEnvelope{Header: actor.Header{"h": h}, Message: m} }
	sys.Root().Send(pid, env("hold", "1"))
	sys.Root().Send(pid, env("fwd", "2"))
	sys.Root().Send(pid, "release")
	require.Equal(t, seen{msg: "fwd", hdr: actor.Header{"h": "2"}}, <-got)
	require.Equal(t, seen{msg: "hold", hdr: actor.Header{"h": "1"}}, <-got)
}

// A PoisonPill in an envelope stops the actor as a bare one does.
func TestMessageEnvelopePoisonPill(t *testing.T) {
	sys := testkit.NewSystem(t)
	target := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	stopped := make(chan struct{})
	sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started:
			c.Watch(target)
			c.Send(target, &actor.MessageEnvelope{Header: actor.Header{"x": "y"}, Message: &actor.PoisonPill{}})
		case *actor.Terminated:
			close(stopped)
		}
	}))
	<-stopped
}

// The send middleware gets the Context the actor was handed: a value a
// receive middleware puts in its wrapper reaches it.
func TestSendMiddlewareSeesReceiveWrapper(t *testing.T) {
	sys := testkit.NewSystem(t)
	got := make(chan seen, 2)
	sink := sys.Root().Spawn(actor.PropsFromFunc(recordTo(got)))
	recv := func(next actor.ReceiveFunc) actor.ReceiveFunc {
		return func(c actor.Context) { next(&headerOverride{Context: c, h: actor.Header{"span": "inner"}}) }
	}
	send := func(next actor.SendFunc) actor.SendFunc {
		return func(c actor.Context, target *actor.PID, msg any, sender *actor.PID) {
			next(c, target, &actor.MessageEnvelope{Header: c.MessageHeader(), Message: msg}, sender)
		}
	}
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if c.Message() == "go" {
			c.Send(sink, "sent")
		}
	}, actor.WithReceiveMiddleware(recv), actor.WithSendMiddleware(send)))
	sys.Root().Send(pid, "go")
	require.Equal(t, seen{msg: "sent", hdr: actor.Header{"span": "inner"}}, <-got)
}

type headerOverride struct {
	actor.Context
	h actor.Header
}

func (o *headerOverride) MessageHeader() actor.Header { return o.h }

// A priority mailbox ranks an enveloped message by the message it carries.
func TestMessageEnvelopePriority(t *testing.T) {
	sys := testkit.NewSystem(t)
	got := make(chan seen, 3)
	gate := make(chan struct{})
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if c.Message() == "block" {
			<-gate
			return
		}
		recordTo(got)(c)
	}, actor.WithPriorityMailbox(2)))
	sys.Root().Send(pid, "block")
	sys.Root().Send(pid, "low")
	sys.Root().Send(pid, &actor.MessageEnvelope{Header: actor.Header{}, Message: urgent{}})
	close(gate)
	require.Equal(t, urgent{}, (<-got).msg)
	require.Equal(t, "low", (<-got).msg)
}

type urgent struct{}

func (urgent) Priority() int { return 1 }
