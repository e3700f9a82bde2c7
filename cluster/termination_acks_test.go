package cluster_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// A grain that stops (here: passivates) tells the other members once, with
// its ActivationTerminated; it does not also send them this member's view
// acknowledgement again, which only a handover's end changes (the ticks
// send it anyway). Before, every termination cost each other member two
// envelopes.
func TestClusterTerminationSendsNoViewAck(t *testing.T) {
	reg := newRegistry(t)
	a, b := startMember(t, reg, counterKind()), startMember(t, reg, counterKind())
	awaitMembers(t, 2, a, b)
	ctx := ctxWait(t)
	onA := identitiesOn(t, ctx, a, a, 40, 1000)
	require.Len(t, onA, 40)
	received := func() uint64 { return remote.Get(b.sys).Node().Stats().EnvelopesReceived }
	before := received()
	for _, id := range onA {
		_, err := cluster.Request[*Total](ctx, a.c, id, &Sleep{}) // the grain passivates
		require.NoError(t, err)
	}
	n := uint64(len(onA))
	require.Eventually(t, func() bool { return received()-before >= n }, wait, time.Millisecond,
		"b hears of every termination")
	// The last termination's message was written after every earlier
	// one's ack, had it sent any. A tick's ack or two may come in between.
	require.LessOrEqual(t, received()-before, n+4, "one envelope per termination")
}
