package cluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/testkit"
)

// A grain's producer runs when the placement actor spawns the grain. A
// panic there is an activation failure like a panic in the Started handler
// (docs/cluster.md, "Activation failures"): the caller gets
// *ActivationFailedError, and the member keeps serving every other grain.
// The panic used to escape the spawn while the placement actor held the
// lock every grain takes at its first message: the caller waited out its
// deadline, and no grain on the member ever started again.
func TestClusterProducerPanicIsActivationFailure(t *testing.T) {
	broken := cluster.NewKind("broken", actor.PropsFromProducer(func() actor.Actor { panic("test: cannot build the grain") }))
	nd := startMember(t, newRegistry(t), broken, counterKind())
	awaitMembers(t, 1, nd)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := cluster.Request[*Total](ctx, nd.c, cluster.NewIdentity("broken", "1"), &Get{})
	var af *cluster.ActivationFailedError
	if !errors.As(err, &af) || ctx.Err() != nil {
		t.Fatalf("err %v, want *ActivationFailedError at once", err)
	}
	_, err = cluster.Request[*Total](ctx, nd.c, cluster.NewIdentity("counter", "1"), &Add{N: 1})
	require.NoError(t, err, "another grain on the member")
	_, err = cluster.Request[*Total](ctx, nd.c, cluster.NewIdentity("broken", "1"), &Get{})
	require.ErrorAs(t, err, &af, "asked again, it fails again: no lease was left behind")
	// The failed activation's lease goes with its grain's termination,
	// which the caller's error may precede: the producer's panic is the
	// grain's failure on its first turn, as a panicking Started handler is.
	testkit.Eventually(t, func() bool { return nd.c.ActiveCount() == 1 }, wait, "active %d", nd.c.ActiveCount())
}
