package tracing_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// Messages of the grain test (JSON).
type (
	Where struct{}
	Here  struct{ Address string }
)

// A cluster request from a context with a span (an HTTP handler's) on
// member 0 to a grain owned by another member of a 3-member cluster over
// loopback TCP: the grain's receive span is the child of the caller's span,
// in the same trace (V3.x: the request path, activation and the PidCache
// carry the header with the message).
func TestClusterRequestToRemoteGrainIsOneTrace(t *testing.T) {
	tr, rec, tracer := newTracing(t)
	kind := cluster.NewKind("traced", actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*Where); ok {
			c.Respond(&Here{Address: c.Self().Address})
		}
	}, tr.WithReceiveSpans(), tr.WithPropagation()))
	tc := testkit.NewCluster(t, testkit.Nodes(3), testkit.TCP(), testkit.Kinds(kind),
		testkit.Serializers(func(s *remote.Serializers) error {
			if err := remote.RegisterJSON[*Where](s, "tracing.Where"); err != nil {
				return err
			}
			return remote.RegisterJSON[*Here](s, "tracing.Here")
		}))
	caller := tc.Node(0)
	for i := range 64 {
		id := cluster.NewIdentity("traced", fmt.Sprintf("g-%d", i))
		root, span := tracer.Start(context.Background(), "http "+id.ID)
		ctx, cancel := context.WithTimeout(root, wait)
		here, err := cluster.Request[*Here](ctx, caller, id, tr.Wrap(ctx, &Where{}))
		cancel()
		span.End()
		require.NoError(t, err)
		if here.Address == tc.Address(0) {
			continue // owned by the caller's member: look for a remote one
		}
		// The grain answered before its receive span ended: wait for the
		// span by stopping the member that hosts it.
		for j := range tc.Len() {
			if tc.Address(j) == here.Address {
				tc.Stop(j)
			}
		}
		s := spanNamed(t, rec, span.SpanContext().TraceID(), "receive *tracing_test.Where")
		requireChild(t, span.SpanContext(), s)
		return
	}
	t.Fatal("no grain of 64 landed on another member")
}

// Once is answered only the second time a grain receives it: the first
// attempt of a cluster request times out and the cluster context retries.
type Once struct{}

// A cluster request whose first attempt goes unanswered is retried with the
// same header: both deliveries to the remote grain are children of the
// caller's span, in its trace, and the reply of the retry arrives.
func TestClusterRetryKeepsTheTrace(t *testing.T) {
	tr, rec, tracer := newTracing(t)
	kind := cluster.NewKind("retried", actor.PropsFromProducer(func() actor.Actor {
		seen := false
		return actor.ReceiveFunc(func(c actor.Context) {
			switch c.Message().(type) {
			case *Where:
				c.Respond(&Here{Address: c.Self().Address})
			case *Once:
				if seen {
					c.Respond(&Here{Address: c.Self().Address})
				}
				seen = true
			}
		})
	}, tr.WithReceiveSpans(), tr.WithPropagation()))
	tc := testkit.NewCluster(t, testkit.Nodes(3), testkit.TCP(), testkit.Kinds(kind),
		testkit.ConfigureCluster(func(c *cluster.Config) { c.AttemptTimeout = 300 * time.Millisecond }),
		testkit.Serializers(func(s *remote.Serializers) error {
			if err := remote.RegisterJSON[*Where](s, "tracing.Where"); err != nil {
				return err
			}
			if err := remote.RegisterJSON[*Once](s, "tracing.Once"); err != nil {
				return err
			}
			return remote.RegisterJSON[*Here](s, "tracing.Here")
		}))
	caller := tc.Node(0)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for i := range 64 {
		id := cluster.NewIdentity("retried", fmt.Sprintf("g-%d", i))
		where, err := cluster.Request[*Here](ctx, caller, id, &Where{})
		require.NoError(t, err)
		if where.Address == tc.Address(0) {
			continue // owned by the caller's member: look for a remote one
		}
		root, span := tracer.Start(ctx, "http "+id.ID)
		here, err := cluster.Request[*Here](root, caller, id, tr.Wrap(root, &Once{}))
		span.End()
		require.NoError(t, err)
		require.Equal(t, where.Address, here.Address)
		for j := range tc.Len() {
			if tc.Address(j) == here.Address {
				tc.Stop(j) // every receive span of the grain has ended
			}
		}
		var got []sdktrace.ReadOnlySpan
		for _, s := range rec.Ended() {
			if s.Name() == "receive *tracing_test.Once" {
				got = append(got, s)
			}
		}
		require.Len(t, got, 2, "the first attempt and the retry were both received")
		for _, s := range got {
			requireChild(t, span.SpanContext(), s)
		}
		return
	}
	t.Fatal("no grain of 64 landed on another member")
}
