package tracing_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

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
