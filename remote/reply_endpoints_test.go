package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/scheduler"
)

// TestReplyEndpointsBounded: answers to 100 addresses that peers named
// (sendReply), none of which answers a dial, with the dial budget spent and
// a node clock that does not move. Each such address had an endpoint (a
// goroutine and a queue) until GiveUpAfter, so a peer naming ever new
// senders made the node hold as many as it named within GiveUpAfter: 100
// endpoints here. Now at most MaxInboundConnections (16) wait to connect;
// the answers beyond fail at once with ErrTooManyEndpoints. A local Send to
// a new address is not refused, and an answer gets an endpoint again once
// one of the waiting ones has gone.
func TestReplyEndpointsBounded(t *testing.T) {
	const named, limit = 100, 16
	cfg := testConfig()
	cfg.DialBudget = 1
	cfg.MaxInboundConnections = limit
	tr := &countingTransport{refuse: true}
	n, rec := startNode(t, cfg, WithTransport(tr), WithClock(scheduler.NewManualClock(time.Now())))
	var refused int
	for i := range named {
		addr := fmt.Sprintf("127.0.0.1:%d", 2000+i)
		err := n.send(addr, actor.NewPID(addr, "f"), nil, ping(uint64(i)), sendReply)
		if err != nil {
			require.ErrorIs(t, err, ErrTooManyEndpoints)
			refused++
		}
	}
	assert.Equal(t, limit, n.Stats().Endpoints)
	assert.Equal(t, named-limit, refused)
	rec.waitUntil(t, "refusals reported", func(r *recorder) bool { return len(r.undelivered) == named-limit })

	// Local code's first Send to a new address is not held back.
	local := "127.0.0.1:3000"
	require.NoError(t, n.Send(local, Envelope{Target: PIDRef{Address: local, ID: "f"}, Message: ping(1)}))
	assert.Equal(t, limit+1, n.Stats().Endpoints)

	// Local code sends to a waiting address: it no longer counts.
	first := "127.0.0.1:2000"
	require.NoError(t, n.Send(first, Envelope{Target: PIDRef{Address: first, ID: "f"}, Message: ping(2)}))
	again := "127.0.0.1:4000"
	require.NoError(t, n.send(again, actor.NewPID(again, "f"), nil, ping(3), sendReply))
	assert.Equal(t, limit+2, n.Stats().Endpoints)
	more := "127.0.0.1:4001"
	require.ErrorIs(t, n.send(more, actor.NewPID(more, "f"), nil, ping(4), sendReply), ErrTooManyEndpoints)
}

// connKeeper is TCP whose dials to refuse fail at once and whose other
// connections it keeps, so that a test can cut them.
type connKeeper struct {
	TCPTransport
	refuse  string
	refused atomic.Int64 // dials to refuse
	dials   atomic.Int64 // dials to other addresses
	mu      sync.Mutex
	conns   []net.Conn
}

func (k *connKeeper) Dial(ctx context.Context, address string) (net.Conn, error) {
	if address == k.refuse {
		k.refused.Add(1)
		return nil, errors.New("test: dial refused")
	}
	k.dials.Add(1)
	c, err := k.TCPTransport.Dial(ctx, address)
	if err == nil {
		k.mu.Lock()
		k.conns = append(k.conns, c)
		k.mu.Unlock()
	}
	return c, err
}

func (k *connKeeper) cut() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, c := range k.conns {
		_ = c.Close()
	}
}

// TestLocalPeerRedialsWithBudgetSpent: a peer this node sends to loses its
// connection while the dial budget is spent (by an answer to an address
// another peer named, on a node clock that does not move). It is redialled
// at once, the budget still empty: it was reached by a dial of this node, so its redials are not
// among the dials others can cause. Before, the redial was deferred to its
// backoff slot like the answers' dials, so whoever kept the budget empty
// kept this node from its peers until GiveUpAfter.
func TestLocalPeerRedialsWithBudgetSpent(t *testing.T) {
	cfg := testConfig()
	cfg.DialBudget = 1
	const named = "127.0.0.1:1001"
	tr := &connKeeper{refuse: named}
	n, _ := startNode(t, cfg, WithTransport(tr), WithClock(scheduler.NewManualClock(time.Now())))
	peer, prec := startNode(t, testConfig())

	require.NoError(t, n.Send(peer.Address(), Envelope{Target: PIDRef{Address: peer.Address(), ID: "x"}, Message: ping(1)}))
	prec.waitUntil(t, "first ping", func(r *recorder) bool { return len(r.delivered) == 1 })
	require.NoError(t, n.send(named, actor.NewPID(named, "f"), nil, ping(2), sendReply)) // takes the budget's one dial
	require.Eventually(t, func() bool { return tr.refused.Load() == 1 }, waitTimeout, time.Millisecond)

	// The redial is made at once. (Whether the peer takes it depends on
	// whether it has noticed the cut yet: else it refuses the new
	// connection while it probes the old one, and the next redial waits
	// for a backoff on the clock that does not move.)
	tr.cut()
	require.Eventually(t, func() bool { return tr.dials.Load() == 2 || n.Stats().DialsDeferred > 0 }, waitTimeout, time.Millisecond)
	assert.Zero(t, n.Stats().DialsDeferred, "the peer's redial was deferred")
	assert.Equal(t, int64(2), tr.dials.Load())
}

// TestInboundCapNotOpenedByReplies: a claim beyond MaxInboundConnections
// is let in only for an address that local code sent to, not for one this
// node only answers because a peer named it. Before, any endpoint this node
// had sent to counted, answers included, so a party could have its
// addresses answered (naming them as senders) and then claim them all
// beyond the bound, each holding a connection and two goroutines here.
func TestInboundCapNotOpenedByReplies(t *testing.T) {
	cfg := testConfig()
	cfg.MaxInboundConnections = 1
	b, rb := startNode(t, cfg, WithTransport(&countingTransport{refuse: true}))

	r1 := dialRaw(t, b.Address())
	kind, _ := r1.claim("first", "127.0.0.1:1001")
	require.Equal(t, kindWelcome, kind)
	rb.waitEvent(t, EventConnected, nil)

	const named = "127.0.0.1:1002"
	require.NoError(t, b.send(named, actor.NewPID(named, "f"), nil, ping(1), sendReply))
	r2 := dialRaw(t, b.Address())
	kind, code := r2.claim("second", named)
	require.Equal(t, kindReject, kind, "a claim of an address only answered got in beyond the bound")
	assert.Equal(t, RejectBusy, code)
}
