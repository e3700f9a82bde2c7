package tracing_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/router"
)

type (
	stashMe struct{}
	openUp  struct{}
	work    struct{}
)

// A traced message that an actor stashes keeps its trace when unstashed
// (docs/tracing.md: Stash keeps the header): what the actor sends while
// handling it again is in the caller's trace, and so is a pool routee's
// receive (the routee gets the header).
func TestAkkaStashAndPoolKeepTheTrace(t *testing.T) {
	tr, rec, tracer := newTracing(t)
	sys, err := actor.NewSystem(actor.SystemConfig{})
	require.NoError(t, err)
	done := make(chan struct{})
	pool, err := router.SpawnPool(sys.Root(), actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*work); ok {
			close(done)
		}
	}, tr.WithReceiveSpans()), 2, router.RoundRobin())
	require.NoError(t, err)
	stasher := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *stashMe:
			c.Stash()
			c.Become(func(c actor.Context) {
				switch c.Message().(type) {
				case *openUp:
					c.UnbecomeStacked()
					c.Become(func(c actor.Context) {
						if _, ok := c.Message().(*stashMe); ok {
							c.Send(pool, &work{})
						}
					})
					c.UnstashAll()
				}
			})
		}
	}, tr.WithPropagation()))
	root, span := tracer.Start(context.Background(), "http")
	sys.Root().Send(stasher, tr.Wrap(root, &stashMe{}))
	sys.Root().Send(stasher, &openUp{}) // untraced
	<-done
	span.End()
	shutdown(t, sys)
	recv := spanNamed(t, rec, span.SpanContext().TraceID(), "receive *tracing_test.work")
	requireChild(t, span.SpanContext(), recv)
}
