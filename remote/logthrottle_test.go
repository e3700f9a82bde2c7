package remote

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/scheduler"
)

// logCapture is a slog.Handler that keeps every record.
type logCapture struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *logCapture) Enabled(context.Context, slog.Level) bool { return true }
func (h *logCapture) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logCapture) WithGroup(string) slog.Handler            { return h }
func (h *logCapture) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.records = append(h.records, r.Clone())
	h.mu.Unlock()
	return nil
}

// find returns the records with message msg, and the value of attr in each.
func (h *logCapture) find(msg, attr string) []slog.Value {
	h.mu.Lock()
	defer h.mu.Unlock()
	var vs []slog.Value
	for _, r := range h.records {
		if r.Message != msg {
			continue
		}
		v := slog.Value{}
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == attr {
				v = a.Value
			}
			return true
		})
		vs = append(vs, v)
	}
	return vs
}

// TestRefusedEnvelopesLogThrottled: a peer that sends a frame of envelopes
// of an unregistered type gets every one refused (an event and an
// Undelivered each), but the node logs the refusal once per
// refusalLogInterval, with the number held back, not once per envelope.
func TestRefusedEnvelopesLogThrottled(t *testing.T) {
	logs := &logCapture{}
	cfg := testConfig()
	cfg.Logger = slog.New(logs)
	clock := scheduler.NewManualClock(time.Now())
	b, rb := startNode(t, cfg, WithClock(clock))
	const peerAddr, bad = "10.0.3.1:1", 200
	r := dialRaw(t, b.Address())
	r.handshake(cfg.SystemName, "raw-flood", peerAddr)
	enc := newEnvelopeEncoder(peerAddr, b.Address())
	refused := func(k int) {
		t.Helper()
		var body []byte
		for range k {
			body = enc.append(body, &wireEnvelope{target: PIDRef{b.Address(), "t"}, serializer: SerializerJSON, typeName: "not.Registered", payload: []byte(`{}`)})
		}
		r.write(appendFrame(nil, kindEnvelopes, body))
	}
	inbound := func(r *recorder) int {
		k := 0
		for _, u := range r.undelivered {
			if u.Inbound {
				k++
			}
		}
		return k
	}
	const msg = "remote: refusing inbound envelope"

	refused(bad)
	rb.waitUntil(t, "every envelope refused", func(r *recorder) bool { return inbound(r) == bad })
	require.Len(t, logs.find(msg, "suppressed"), 1)

	clock.Advance(refusalLogInterval)
	refused(1)
	rb.waitUntil(t, "the next one refused", func(r *recorder) bool { return inbound(r) == bad+1 })
	got := logs.find(msg, "suppressed")
	require.Len(t, got, 2)
	assert.Equal(t, uint64(bad-1), got[1].Uint64())
	k := 0
	for _, e := range rb.snapshotEvents() {
		if e.Kind == EventUnknownType {
			k++
		}
	}
	assert.Equal(t, bad+1, k, "every refusal is an event")
}
