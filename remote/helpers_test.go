package remote

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// bytesCodec is the codec benchmarks' setup: a registry that knows
// wrapperspb.BytesValue, that type's codec, a message with a 64-byte
// payload (as the two-process benchmarks send) and its encoding.
func bytesCodec(tb testing.TB) (*Serializers, *typeCodec, *wrapperspb.BytesValue, []byte) {
	tb.Helper()
	ser := NewSerializers()
	require.NoError(tb, ser.RegisterProto(&wrapperspb.BytesValue{}))
	msg := wrapperspb.Bytes(make([]byte, 64))
	c, err := ser.codecFor(msg)
	require.NoError(tb, err)
	payload, err := c.encode(nil, msg)
	require.NoError(tb, err)
	return ser, c, msg, payload
}

// waitTimeout bounds every wait on an event; tests never sleep.
const waitTimeout = 15 * time.Second

type delivery struct {
	From Peer
	Env  Envelope
}

type terminated struct {
	Peer   Peer
	Reason error
}

// recorder collects everything a Node reports through its Hooks.
type recorder struct {
	mu          sync.Mutex
	changed     chan struct{} // closed and replaced on every change
	delivered   []delivery
	undelivered []Undelivered
	terminated  []terminated
	events      []Event
	onDeliver   func(Peer, Envelope) // optional, called outside the lock
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{})} }

func (r *recorder) bump() {
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *recorder) hooks() Hooks {
	return Hooks{
		Deliver: func(from Peer, env Envelope) {
			if r.onDeliver != nil {
				r.onDeliver(from, env)
			}
			r.mu.Lock()
			r.delivered = append(r.delivered, delivery{from, env})
			r.bump()
			r.mu.Unlock()
		},
		Undelivered: func(u Undelivered) {
			r.mu.Lock()
			r.undelivered = append(r.undelivered, u)
			r.bump()
			r.mu.Unlock()
		},
		PeerTerminated: func(p Peer, reason error) {
			r.mu.Lock()
			r.terminated = append(r.terminated, terminated{p, reason})
			r.bump()
			r.mu.Unlock()
		},
		Event: func(e Event) {
			r.mu.Lock()
			r.events = append(r.events, e)
			r.bump()
			r.mu.Unlock()
		},
	}
}

// waitUntil blocks until cond (evaluated under the recorder's lock) holds.
func (r *recorder) waitUntil(t testing.TB, what string, cond func(r *recorder) bool) {
	t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		ok, ch := cond(r), r.changed
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			r.mu.Lock()
			defer r.mu.Unlock()
			t.Fatalf("timed out waiting for %s; events: %v", what, r.events)
		}
	}
}

// waitEvent waits for an event of kind whose Err matches target (nil: any)
// and returns it.
func (r *recorder) waitEvent(t testing.TB, kind EventKind, target error) Event {
	t.Helper()
	var got Event
	r.waitUntil(t, kind.String()+" event", func(r *recorder) bool {
		for _, e := range r.events {
			if e.Kind == kind && (target == nil || errors.Is(e.Err, target)) {
				got = e
				return true
			}
		}
		return false
	})
	return got
}

func (r *recorder) countDelivered() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.delivered)
}

func (r *recorder) snapshotEvents() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// testConfig is DefaultConfig with short backoffs for tests.
func testConfig() Config {
	c := DefaultConfig()
	c.ReconnectBackoffMin = 5 * time.Millisecond
	c.ReconnectBackoffMax = 50 * time.Millisecond
	c.DialTimeout = 3 * time.Second
	c.HandshakeTimeout = 3 * time.Second
	c.HeartbeatInterval = 200 * time.Millisecond
	c.HeartbeatTimeout = 10 * time.Second
	c.GiveUpAfter = 10 * time.Second
	return c
}

// startNode starts a node and closes it when the test ends.
func startNode(t testing.TB, cfg Config, opts ...Option) (*Node, *recorder) {
	t.Helper()
	rec := newRecorder()
	n, err := NewNode(cfg, rec.hooks(), opts...)
	require.NoError(t, err)
	require.NoError(t, n.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		_ = n.Close(ctx)
	})
	return n, rec
}

func ping(seq uint64) *Ping { return &Ping{Seq: seq} }
