package remote

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heapInUse is the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestFrameReaderAllocatesAsTheBodyArrives: a header announcing a large
// (allowed) frame whose body never comes costs what arrived, not what was
// announced.
func TestFrameReaderAllocatesAsTheBodyArrives(t *testing.T) {
	h := appendFrameHeader(nil, kindEnvelopes, 0)
	binary.BigEndian.PutUint32(h[5:], 4<<20)
	fr := newFrameReader(bytes.NewReader(append(h, make([]byte, 100)...)), 4<<20)
	_, _, err := fr.next()
	require.ErrorIs(t, err, ErrTruncated)
	assert.LessOrEqual(t, cap(fr.buf), 64<<10, "buffer of %d bytes for 100 bytes received", cap(fr.buf))

	// A whole large frame still reads, and the buffer is reused.
	body := bytes.Repeat([]byte{7}, 1<<20+3)
	fr = newFrameReader(bytes.NewReader(append(appendFrame(nil, kindEnvelopes, body), appendFrame(nil, kindEnvelopes, body[:10])...)), 4<<20)
	kind, got, err := fr.next()
	require.NoError(t, err)
	assert.Equal(t, kindEnvelopes, kind)
	assert.Equal(t, body, got)
	_, got, err = fr.next()
	require.NoError(t, err)
	assert.Equal(t, body[:10], got)
}

// TestOversizedHelloHeaders: 150 clients each announce a hello of 4 MiB (the
// default maximum frame size) and send nothing more. Before the handshake
// completes the limit is the largest possible hello, so each is refused on
// its header and the node's heap stays flat.
func TestOversizedHelloHeaders(t *testing.T) {
	const clients = 150
	cfg := testConfig()
	cfg.HandshakeTimeout = time.Minute // no help from the timeout
	b, rb := startNode(t, cfg)
	base := heapInUse()

	hdr := appendFrameHeader(nil, kindHello, 0)
	binary.BigEndian.PutUint32(hdr[5:], uint32(cfg.MaxFrameSize))
	for range clients {
		c, err := net.Dial("tcp", b.Address())
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		_, err = c.Write(hdr)
		require.NoError(t, err)
	}
	refused := func() int {
		rb.mu.Lock()
		defer rb.mu.Unlock()
		k := 0
		for _, e := range rb.events {
			if e.Kind == EventHandshakeRefused && errors.Is(e.Err, ErrFrameTooLarge) {
				k++
			}
		}
		return k
	}
	const bound = 16 << 20
	var grown uint64
	// Either every header was refused, or the heap has already grown past
	// the bound (the node allocates what the headers announce).
	require.Eventually(t, func() bool {
		if refused() == clients {
			return true
		}
		grown = heapInUse() - min(base, heapInUse())
		return grown > bound
	}, waitTimeout, 10*time.Millisecond)
	grown = heapInUse() - min(base, heapInUse())
	t.Logf("heap after %d oversized hello headers: %+.1f MiB (%d refused)", clients, float64(int64(grown))/(1<<20), refused())
	assert.Equal(t, clients, refused())
	assert.LessOrEqual(t, grown, uint64(bound))
}

// TestSilentConnectionsAreCapped: 3,000 connections that never say a word.
// Pending inbound handshakes are capped (Config.MaxPendingHandshakes); the
// excess is refused at accept, before a goroutine or buffer is spent on it.
func TestSilentConnectionsAreCapped(t *testing.T) {
	const conns = 3000
	cfg := testConfig()
	cfg.HandshakeTimeout = time.Minute
	b, rb := startNode(t, cfg)
	limit := int(max(DefaultConfig().MaxPendingHandshakes, 0))
	baseG := runtime.NumGoroutine()
	baseH := heapInUse()

	var mu sync.Mutex
	var open []net.Conn
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range open {
			_ = c.Close()
		}
	})
	for range conns {
		c, err := net.Dial("tcp", b.Address())
		require.NoError(t, err)
		mu.Lock()
		open = append(open, c)
		mu.Unlock()
	}
	// Wait until the node has dealt with every connection: refused the
	// excess, or started a goroutine for each.
	require.Eventually(t, func() bool {
		return b.Stats().HandshakesRefused >= uint64(conns-limit) || runtime.NumGoroutine()-baseG >= conns
	}, waitTimeout, 10*time.Millisecond)
	g := runtime.NumGoroutine() - baseG
	h := int64(heapInUse()) - int64(baseH)
	t.Logf("after %d silent connections (cap %d): %+d goroutines, heap %+.1f MiB, %d refused at accept",
		conns, limit, g, float64(h)/(1<<20), b.Stats().HandshakesRefused)
	assert.LessOrEqual(t, g, limit+8)
	assert.GreaterOrEqual(t, b.Stats().HandshakesRefused, uint64(conns-limit))
	ev := rb.waitEvent(t, EventHandshakeRefused, nil)
	assert.ErrorIs(t, ev.Err, ErrHandshake)

	// Once the silent ones are gone, a real peer is served.
	mu.Lock()
	for _, c := range open {
		_ = c.Close()
	}
	open = nil
	mu.Unlock()
	a, _ := startNode(t, testConfig())
	require.NoError(t, a.Send(b.Address(), Envelope{Target: PIDRef{b.Address(), "x"}, Message: ping(1)}))
	rb.waitUntil(t, "delivery after the flood", func(r *recorder) bool { return len(r.delivered) == 1 })
}

// TestFrameReaderDropsLargeBufferAfterBurst: the buffer grown for large
// frames serves each of them and the small frames between them, and is
// dropped after dropLargeAfter small frames in a row. Before, one 4 MiB
// frame left 4 MiB held by the connection for its life.
func TestFrameReaderDropsLargeBufferAfterBurst(t *testing.T) {
	large := bytes.Repeat([]byte{7}, 1<<20)
	small := large[:100]
	var stream []byte
	for range 2 {
		stream = appendFrame(stream, kindEnvelopes, large)
	}
	for range dropLargeAfter - 1 {
		stream = appendFrame(stream, kindEnvelopes, small)
	}
	stream = appendFrame(stream, kindEnvelopes, large) // the run starts over
	for range dropLargeAfter + 1 {
		stream = appendFrame(stream, kindEnvelopes, small)
	}
	fr := newFrameReader(bytes.NewReader(stream), 4<<20)
	read := func(want []byte) {
		t.Helper()
		_, got, err := fr.next()
		require.NoError(t, err)
		require.Equal(t, want, got)
	}

	read(large)
	grown := cap(fr.buf)
	require.GreaterOrEqual(t, grown, len(large))
	read(large)
	assert.Equal(t, grown, cap(fr.buf), "a run of large frames reuses the buffer")
	for range dropLargeAfter - 1 {
		read(small)
	}
	assert.Equal(t, grown, cap(fr.buf), "buffer dropped before %d small frames in a row", dropLargeAfter)
	read(large)
	assert.Equal(t, grown, cap(fr.buf), "the large frame after the small ones reuses the buffer")
	for range dropLargeAfter - 1 {
		read(small)
	}
	assert.Equal(t, grown, cap(fr.buf), "a large frame did not start the run of small frames over")
	read(small)
	assert.LessOrEqual(t, cap(fr.buf), keptBody, "buffer of %d bytes kept after %d small frames in a row", cap(fr.buf), dropLargeAfter)
	kept := cap(fr.buf)
	read(small)
	assert.Equal(t, kept, cap(fr.buf), "small frames reuse the small buffer")
}
