package remotebench

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"
)

// The implementation names, as used in benchmark names (impl=NAME) and by
// the peer switch.
const (
	ImplFraktor = "fraktor"
	ImplProto   = "protoactor"
	// ImplRawTCP is the baseline: plain TCP sockets (rawtcp.go).
	ImplRawTCP = "raw-tcp"
	// ImplRawProto is the codec's floor: raw-tcp with every payload a
	// protobuf message, encoded and decoded by the socket's goroutines
	// (rawproto.go).
	ImplRawProto = "raw-proto"
)

// Settings shared by both implementations.
const (
	// PayloadSize is the size of the bytes field of every measured
	// message (a wrapperspb.BytesValue, 66 bytes once encoded).
	PayloadSize = 64
	// Window bounds the one-way messages in flight (sent, not yet
	// acknowledged by the sink), so no outbound queue overflows.
	Window = 8192
	// AckEvery is how many messages the sink counts between two
	// acknowledgements (it also acknowledges the last one).
	AckEvery = 1024
	// stallLimit bounds one workload run.
	stallLimit = 3 * time.Minute
)

// The actor names the peer spawns.
const (
	sinkName = "sink"
	echoName = "echo"
)

// Client runs the remote workloads against one peer. Implementations:
// newFraktorClient, newProtoClient.
type Client interface {
	// OneWay sends n payload messages to the peer's sink, at most Window
	// unacknowledged, and returns once the sink acknowledged all of them:
	// the number of messages the sink counted.
	OneWay(n int) (int, error)
	// PingPong makes n sequential request/response round trips to the
	// peer's echo actor from a local actor, storing each round trip's
	// duration in lat (len(lat) >= n), and returns the number of replies.
	PingPong(n int, lat []time.Duration) (int, error)
	// Close stops the local actor system, waiting at most until ctx ends.
	Close(ctx context.Context) error
}

// NewClient starts a client actor system of impl connected to the peer at
// address.
func NewClient(impl string, peer PeerInfo) (Client, error) {
	switch impl {
	case ImplFraktor:
		return newFraktorClient(peer)
	case ImplProto:
		return newProtoClient(peer)
	case ImplRawTCP:
		return newRawClient(peer, false)
	case ImplRawProto:
		return newRawClient(peer, true)
	default:
		return nil, ErrUnknownImpl
	}
}

// payload returns the measured message.
func payload() []byte {
	p := make([]byte, PayloadSize)
	for i := range p {
		p[i] = byte(i)
	}
	return p
}

// badCount is what a sink reports, instead of its count, once it has
// counted a payload that was not the one sent (sinkCount).
const badCount = -1

// sinkCount is the sink's side of a one-way run: it counts every payload
// and, at each acknowledgement, reports its count, or badCount once any
// payload was not PayloadSize bytes (every later report too, so the last
// one, which the sender waits for, carries it).
type sinkCount struct {
	expect, count int64
	bad           bool
}

// start begins a run of n payloads.
func (s *sinkCount) start(n int64) { *s = sinkCount{expect: n} }

// payload counts one payload and returns what to report, or false when
// this one is not acknowledged.
func (s *sinkCount) payload(m *wrapperspb.BytesValue) (int64, bool) {
	s.count++
	if len(m.GetValue()) != PayloadSize {
		s.bad = true
	}
	if s.count%AckEvery != 0 && s.count != s.expect {
		return 0, false
	}
	if s.bad {
		return badCount, true
	}
	return s.count, true
}

// intact reports whether a reply carries a payload of PayloadSize bytes.
func intact(m *wrapperspb.BytesValue) bool { return len(m.GetValue()) == PayloadSize }

// window tracks the one-way acknowledgements: the sink's latest count,
// published by a local actor, and a wake-up for the sender.
type window struct {
	acked  int64 // owned by the sender goroutine
	bad    bool  // the sink reported badCount; owned by the sender goroutine
	counts chan int64
}

func newWindow() *window { return &window{counts: make(chan int64, 64)} }

// ack is called by the local reporter actor with the sink's count; it
// never blocks (a full channel means the sender has unread counts, and a
// later count supersedes them).
func (w *window) ack(count int64) {
	for {
		select {
		case w.counts <- count:
			return
		default:
		}
		select {
		case <-w.counts:
		default:
		}
	}
}

// waitBelow blocks until fewer than limit of sent are unacknowledged.
func (w *window) waitBelow(ctx context.Context, sent, limit int64) error {
	for sent-w.acked >= limit && !w.bad {
		select {
		case c := <-w.counts:
			w.take(c)
		case <-ctx.Done():
			return ErrStalled
		}
	}
	if w.bad {
		return ErrBadPayload
	}
	return nil
}

// take records one count from the sink.
func (w *window) take(c int64) {
	if c == badCount {
		w.bad = true
		return
	}
	w.acked = max(w.acked, c)
}

// drain takes any counts already published, without blocking.
func (w *window) drain() {
	for {
		select {
		case c := <-w.counts:
			w.take(c)
		default:
			return
		}
	}
}

// runOneWay is the sender loop of OneWay, shared by both implementations:
// send(…) sends one payload to the sink.
func runOneWay(w *window, n int, send func()) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), stallLimit)
	defer cancel()
	for sent := int64(0); sent < int64(n); sent++ {
		if sent-w.acked >= Window {
			w.drain()
			if err := w.waitBelow(ctx, sent, Window); err != nil {
				return int(w.acked), fmt.Errorf("%w: %d of %d sent, %d acknowledged", err, sent, n, w.acked)
			}
		}
		send()
	}
	if err := w.waitBelow(ctx, int64(n), 1); err != nil {
		return int(w.acked), fmt.Errorf("%w: all %d sent, %d acknowledged", err, n, w.acked)
	}
	return int(w.acked), nil
}

// awaitDone waits for done, at most stallLimit.
func awaitDone(done <-chan struct{}) error {
	t := time.NewTimer(stallLimit)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
		return ErrStalled
	}
}
