package remote_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/scheduler"
)

// dialCounter is TCP whose dials are counted; a dial of an address under
// the reserved .invalid domain (the third parties a hostile peer names)
// fails at once, without a lookup.
type dialCounter struct {
	remote.TCPTransport
	dials atomic.Int64
}

func (d *dialCounter) Dial(ctx context.Context, address string) (net.Conn, error) {
	d.dials.Add(1)
	if strings.Contains(address, ".invalid:") {
		return nil, errors.New("test: no such host")
	}
	return d.TCPTransport.Dial(ctx, address)
}

// thirdParty is the i-th address a hostile peer names as a sender.
func thirdParty(i int) string { return fmt.Sprintf("third-%d.invalid:1", i) }

// reflect has peer send n envelopes to target, each naming another third
// party's process as its sender.
func reflect(t *testing.T, peer *remote.Node, target remote.PIDRef, n int) {
	t.Helper()
	for i := range n {
		require.NoError(t, peer.Send(target.Address, remote.Envelope{
			Target: target, Sender: remote.PIDRef{Address: thirdParty(i), ID: "f"}, Message: &Echo{Text: "x"},
		}))
	}
}

// TestDialBudgetBoundsReflectedDials: a connected peer names 50 distinct
// third addresses as the senders of requests to an actor that answers
// them. The answers go to addresses a peer named, so every dial they cause
// takes from the node-wide budget (5 a second here): on a node clock that
// does not move, 5 dials and 45 deferred; one second later 5 more. A local
// Send to a new address meanwhile is not held back by the empty budget.
// Before, each of the 50 was dialled at once and redialled with backoff
// until GiveUpAfter.
func TestDialBudgetBoundsReflectedDials(t *testing.T) {
	const thirds, budget = 50, 5
	cfg := testConfig(t)
	cfg.DialBudget = budget
	cfg.GiveUpAfter = time.Hour
	clock := scheduler.NewManualClock(time.Now())
	tr := &dialCounter{}
	sysB, rb := startSystem(t, "b", cfg, remote.WithClock(clock), remote.WithTransport(tr))
	echoOn(t, sysB, "echo", "b")
	peer, _ := barePeer(t)
	reflect(t, peer, remote.PIDRef{Address: rb.Address(), ID: "echo"}, thirds)

	st := func() remote.Stats { return rb.Node().Stats() }
	// An endpoint granted a token dials a moment later: wait for both.
	require.Eventually(t, func() bool { return st().DialsDeferred >= thirds-budget && tr.dials.Load() >= budget }, wait,
		time.Millisecond, "deferred %d, dials %d", st().DialsDeferred, tr.dials.Load())
	assert.Equal(t, int64(budget), tr.dials.Load(), "dials with the budget spent")
	assert.Equal(t, uint64(thirds-budget), st().DialsDeferred)
	assert.Equal(t, thirds+1, st().Endpoints, "the peer's and the 50 third parties'")

	// Local code sends to a new address: its first dial is not budgeted.
	sysD, rd := startSystem(t, "d", testConfig(t))
	echoOn(t, sysD, "echo", "d")
	reply, err := actor.Request[*EchoReply](ctxWait(t), sysB.Root(), actor.NewPID(rd.Address(), "echo"), &Echo{Text: "local"})
	require.NoError(t, err)
	assert.Equal(t, "d", reply.By)
	assert.Equal(t, int64(budget+1), tr.dials.Load())

	// One second of node time: five more dials, the other attempts
	// deferred again. Advance fires the endpoints' timers at their own
	// deadlines on the way, so an endpoint may be refused at a moment
	// before the second is over, and the deferrals can add up before the
	// second's dials are made: wait for the dials.
	deferred := st().DialsDeferred
	clock.Advance(time.Second)
	require.Eventually(t, func() bool { return tr.dials.Load() >= 2*budget+1 }, wait, time.Millisecond,
		"dials %d", tr.dials.Load())
	assert.Equal(t, int64(2*budget+1), tr.dials.Load(), "no more than the second's budget")
	assert.Greater(t, st().DialsDeferred, deferred, "the others are deferred again")
}

// TestDeadLetterAnswerToUnknownAddressNotDialled: requests to a process
// that does not exist, each naming another third party as its sender, are
// dead letters here; the DeadLetterResponse that would tell each sender
// goes to an address without an endpoint, so it is dropped and counted,
// not dialled. The peer that sent them, which has a connection, is still
// answered.
func TestDeadLetterAnswerToUnknownAddressNotDialled(t *testing.T) {
	const thirds = 50
	tr := &dialCounter{}
	_, rb := startSystem(t, "b", testConfig(t), remote.WithTransport(tr))
	peer, _ := barePeer(t)
	target := remote.PIDRef{Address: rb.Address(), ID: "nobody"}
	reflect(t, peer, target, thirds)
	st := func() remote.Stats { return rb.Node().Stats() }
	require.Eventually(t, func() bool { return st().AnswersDropped == thirds }, wait, time.Millisecond,
		"answers dropped %d", st().AnswersDropped)

	// The peer's own request is answered over its connection.
	require.NoError(t, peer.Send(target.Address, remote.Envelope{
		Target: target, Sender: remote.PIDRef{Address: peer.Address(), ID: "f"}, Message: &Echo{Text: "x"},
	}))
	require.Eventually(t, func() bool { return peer.Stats().EnvelopesReceived == 1 }, wait, time.Millisecond)
	assert.Zero(t, tr.dials.Load())
	assert.Equal(t, 1, st().Endpoints)
	assert.Equal(t, uint64(thirds), st().AnswersDropped)
}

// TestForwardedSenderReplyArrives: a sender named by a peer is a
// legitimate third node when a request is forwarded: A asks B's forwarder,
// which forwards to C's echo keeping A's future as the sender; C has no
// connection to A and dials it (a budgeted dial) to answer.
func TestForwardedSenderReplyArrives(t *testing.T) {
	cfg := testConfig(t)
	cfg.DialBudget = 1
	sysA, _ := startSystem(t, "a", testConfig(t))
	sysB, _ := startSystem(t, "b", testConfig(t))
	sysC, rc := startSystem(t, "c", cfg)
	echo := echoOn(t, sysC, "echo", "c")
	fwd, err := sysB.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*Echo); ok {
			c.Forward(remotePID(echo))
		}
	}), "fwd")
	require.NoError(t, err)
	reply, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), remotePID(fwd), &Echo{Text: "via b"})
	require.NoError(t, err)
	assert.Equal(t, "c", reply.By)
	assert.Equal(t, 2, rc.Node().Stats().Endpoints, "B dialled C, C dialled A")
}
