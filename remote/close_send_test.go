package remote

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCloseWhileSendingLosesNothing: senders on several goroutines send to
// a healthy peer over loopback TCP while another goroutine closes the
// sending Node. Every envelope Send accepted (returned nil for) is either
// delivered at the peer or reported Undelivered at the sender, exactly
// once; every envelope Send refused is reported Undelivered and not
// delivered; Send after Close fails with ErrStopped; and Close finishes
// gracefully, well before its context's deadline and the connection's
// WriteTimeout and HeartbeatTimeout, since the peer reads.
//
// Cases: Close after a few thousand sends (connection busy), Close at the
// first accepted send (racing the dial and handshake), and a peer that
// answers every envelope (frames flow back, so senders also write
// directly, and the sender has unread input when it closes).
func TestCloseWhileSendingLosesNothing(t *testing.T) {
	for _, tc := range []struct {
		name       string
		closeAfter int64 // accepted sends before Close begins
		replies    bool
	}{
		{"busy", 2000, false},
		{"first-send", 1, false},
		{"replies", 500, true},
	} {
		t.Run(tc.name, func(t *testing.T) { testCloseWhileSending(t, tc.closeAfter, tc.replies) })
	}
}

func testCloseWhileSending(t *testing.T, closeAfter int64, replies bool) {
	const (
		senders    = 6
		perSender  = 20000
		closeBound = 5 * time.Second
	)
	cfg := testConfig()
	// Long socket timeouts: a Close that waits for one of them shows up as
	// a Close that misses closeBound.
	cfg.WriteTimeout = 30 * time.Second
	cfg.HeartbeatTimeout = 30 * time.Second
	sink, rs := startNode(t, cfg)
	if replies {
		rs.onDeliver = func(from Peer, env Envelope) {
			_ = sink.Send(from.Address, Envelope{Target: env.Sender, Message: &Pong{Seq: env.Message.(*Ping).Seq}})
		}
	}
	srcCfg := cfg
	srcCfg.OutboundQueueSize = senders * perSender
	src, ra := startNode(t, srcCfg)
	to := sink.Address()

	// Each envelope's Seq is unique: sender g sends g*perSender+i.
	var (
		accepted  [senders * perSender]atomic.Bool
		refused   [senders * perSender]atomic.Bool
		nAccepted atomic.Int64
		closeNow  = make(chan struct{})
		closeOnce sync.Once
		wg        sync.WaitGroup
	)
	for g := range senders {
		wg.Go(func() {
			for i := range perSender {
				seq := uint64(g*perSender + i)
				err := src.Send(to, Envelope{Target: PIDRef{to, "sink"}, Sender: PIDRef{src.Address(), fmt.Sprintf("g%d", g)}, Message: ping(seq)})
				if err != nil {
					refused[seq].Store(true)
					if errors.Is(err, ErrStopped) {
						return
					}
					continue
				}
				accepted[seq].Store(true)
				if nAccepted.Add(1) == closeAfter {
					closeOnce.Do(func() { close(closeNow) })
				}
			}
		})
	}
	var (
		closeErr     error
		closeElapsed time.Duration
		closed       = make(chan struct{})
	)
	go func() {
		defer close(closed)
		<-closeNow
		ctx, cancel := context.WithTimeout(context.Background(), closeBound)
		defer cancel()
		start := time.Now()
		closeErr = src.Close(ctx)
		closeElapsed = time.Since(start)
	}()
	wg.Wait()
	closeOnce.Do(func() { close(closeNow) }) // in case fewer than closeAfter were accepted
	<-closed
	require.NoError(t, closeErr, "Close with a healthy peer finishes within its context (took %v)", closeElapsed)
	assert.Less(t, closeElapsed, closeBound)

	err := src.Send(to, Envelope{Target: PIDRef{to, "sink"}, Message: ping(senders * perSender)})
	require.ErrorIs(t, err, ErrStopped, "Send after Close")

	// Close has returned: every report at the sender is in. The peer
	// delivers what it read before the goodbye; wait until it has
	// delivered everything that was not reported undelivered.
	want := int(nAccepted.Load())
	undeliveredAccepted := func() int {
		ra.mu.Lock()
		defer ra.mu.Unlock()
		k := 0
		for _, u := range ra.undelivered {
			if p, ok := u.Envelope.Message.(*Ping); ok && p.Seq < senders*perSender && accepted[p.Seq].Load() {
				k++
			}
		}
		return k
	}
	lost := undeliveredAccepted()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		rs.mu.Lock()
		got, ch := len(rs.delivered), rs.changed
		rs.mu.Unlock()
		if got+lost >= want {
			break
		}
		select {
		case <-ch:
			continue
		case <-deadline.C:
		}
		t.Fatalf("envelopes lost: %d accepted, %d delivered, %d reported undelivered (Close took %v)", want, got, lost, closeElapsed)
	}
	// The peer has closed every connection from src: nothing more arrives.
	rs.waitUntil(t, "the peer's connections from src closed", func(r *recorder) bool {
		up := 0
		for _, e := range r.events {
			if e.Peer.NodeID != src.NodeID() {
				continue
			}
			switch e.Kind {
			case EventConnected:
				up++
			case EventDisconnected:
				up--
			}
		}
		return up == 0
	})

	// Exactly once, and refusals are never delivered.
	seen := make([]uint8, senders*perSender)
	rs.mu.Lock()
	for _, d := range rs.delivered {
		seen[d.Env.Message.(*Ping).Seq]++
	}
	rs.mu.Unlock()
	ra.mu.Lock()
	for _, u := range ra.undelivered {
		if p, ok := u.Envelope.Message.(*Ping); ok && p.Seq < senders*perSender {
			seen[p.Seq] += 2
		}
	}
	ra.mu.Unlock()
	bad := 0
	for seq, s := range seen {
		switch {
		case accepted[seq].Load() && s != 1 && s != 2:
			bad++
			if bad <= 5 {
				t.Errorf("accepted envelope %d: delivered %d times, reported undelivered %d times", seq, s&1, s>>1)
			}
		case refused[seq].Load() && s != 2:
			bad++
			if bad <= 5 {
				t.Errorf("refused envelope %d: delivered %d times, reported undelivered %d times", seq, s&1, s>>1)
			}
		case !accepted[seq].Load() && !refused[seq].Load() && s != 0:
			t.Errorf("envelope %d was never sent but was seen", seq)
		}
	}
	require.Zero(t, bad)
	t.Logf("accepted %d, delivered %d, undelivered %d, Close took %v", want, rs.countDelivered(), lost, closeElapsed)
}
