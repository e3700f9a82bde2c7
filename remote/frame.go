package remote

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Frame header layout (9 bytes, see docs/remote.md):
//
//	offset 0  2 bytes  magic "FK"
//	offset 2  1 byte   protocol version (ProtocolVersion)
//	offset 3  1 byte   frame kind
//	offset 4  1 byte   flags (all reserved in version 1: must be 0)
//	offset 5  4 bytes  body length, big endian, ≤ the maximum frame size
const (
	frameHeaderSize = 9
	magic0          = 'F'
	magic1          = 'K'

	// ProtocolVersion is the wire protocol version this package speaks.
	ProtocolVersion = 1
)

// frameKind says what a frame body holds.
type frameKind uint8

const (
	kindHello     frameKind = 1 // dialer → acceptor: hello
	kindWelcome   frameKind = 2 // acceptor → dialer: hello (accepted so far)
	kindAck       frameKind = 3 // dialer → acceptor: empty, handshake complete
	kindReject    frameKind = 4 // either way: code + reason, then close
	kindEnvelopes frameKind = 5 // a batch of one or more envelopes
	kindPing      frameKind = 6 // heartbeat: uvarint sequence number
	kindPong      frameKind = 7 // heartbeat answer: the same sequence number
	kindGoodbye   frameKind = 8 // empty: the sender is shutting down
	maxFrameKind            = kindGoodbye
)

func (k frameKind) String() string {
	switch k {
	case kindHello:
		return "hello"
	case kindWelcome:
		return "welcome"
	case kindAck:
		return "ack"
	case kindReject:
		return "reject"
	case kindEnvelopes:
		return "envelopes"
	case kindPing:
		return "ping"
	case kindPong:
		return "pong"
	case kindGoodbye:
		return "goodbye"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// appendFrameHeader appends a header for a body of length n.
func appendFrameHeader(dst []byte, kind frameKind, n int) []byte {
	dst = append(dst, magic0, magic1, ProtocolVersion, byte(kind), 0)
	return binary.BigEndian.AppendUint32(dst, uint32(n))
}

// appendFrame appends a whole frame.
func appendFrame(dst []byte, kind frameKind, body []byte) []byte {
	return append(appendFrameHeader(dst, kind, len(body)), body...)
}

// parseFrameHeader validates a header; checks run in the order magic,
// version, kind, flags, length, so a peer of another version is told so
// rather than "malformed".
func parseFrameHeader(h []byte, maxFrame int) (frameKind, int, error) {
	if len(h) < frameHeaderSize {
		return 0, 0, fmt.Errorf("%w: header of %d bytes", ErrTruncated, len(h))
	}
	if h[0] != magic0 || h[1] != magic1 {
		return 0, 0, fmt.Errorf("%w: bad magic %#02x%02x", ErrMalformed, h[0], h[1])
	}
	if h[2] != ProtocolVersion {
		return 0, 0, fmt.Errorf("%w: peer speaks version %d, this node %d", ErrBadVersion, h[2], ProtocolVersion)
	}
	kind := frameKind(h[3])
	if kind == 0 || kind > maxFrameKind {
		return 0, 0, fmt.Errorf("%w: unknown frame kind %d", ErrMalformed, h[3])
	}
	if h[4] != 0 {
		return 0, 0, fmt.Errorf("%w: reserved flags %#02x set", ErrMalformed, h[4])
	}
	n := binary.BigEndian.Uint32(h[5:9])
	if uint64(n) > uint64(maxFrame) {
		return 0, 0, fmt.Errorf("%w: %d bytes announced, maximum %d", ErrFrameTooLarge, n, maxFrame)
	}
	return kind, int(n), nil
}

// frameReader reads frames from a stream. It allocates a body buffer only
// after the header's length passed the maximum-size check, grows it only as
// the body's bytes arrive, and reuses it, so it never holds more than
// maxFrame bytes, nor much more than the peer actually sent. Not safe for
// concurrent use.
type frameReader struct {
	r   io.Reader
	max int
	hdr [frameHeaderSize]byte
	buf []byte
	// smallRun counts the frames of at most keptBody bytes read in a row
	// while buf is larger than keptBody (see dropLargeAfter).
	smallRun int
}

// readBufferSize is the read buffer of an established connection.
const readBufferSize = 32 << 10

// bodyChunk is the first step in which a body larger than the current
// buffer is allocated; each further step doubles.
const bodyChunk = 64 << 10

// keptBody is the largest body buffer a reader keeps once the frames are
// small again: a buffer grown for a large frame is dropped after
// dropLargeAfter frames in a row that fit in keptBody, so one burst does
// not hold up to MaxFrameSize per connection for the connection's life
// (TestFrameReaderDropsLargeBufferAfterBurst).
const keptBody = bodyChunk

// dropLargeAfter is how many frames of at most keptBody bytes in a row a
// reader takes before it drops a buffer larger than keptBody. Not the
// first one: traffic that mixes large frames with a few small ones (a
// large reply between heartbeats and small envelopes) would otherwise
// build the large buffer again, step by step, for each large frame
// (TestFrameReaderAlternatingBuildsLargeBufferOnce). An idle connection
// still lets go of it: the peer's heartbeat pings are small frames, one
// per HeartbeatInterval.
const dropLargeAfter = 16

// newFrameReader returns a buffered reader of frames of up to maxFrame
// bytes, for an established stream.
func newFrameReader(r io.Reader, maxFrame int) *frameReader {
	if _, ok := r.(*bufio.Reader); !ok {
		r = bufio.NewReaderSize(r, readBufferSize)
	}
	return &frameReader{r: r, max: maxFrame}
}

// newHandshakeReader returns an unbuffered reader of handshake frames (at
// most maxHandshakeFrame bytes each). Unbuffered, it reads exactly the
// frames it returns, so nothing after the handshake is consumed early, and a
// connection that has not completed its handshake holds no read buffer.
func newHandshakeReader(r io.Reader) *frameReader {
	return &frameReader{r: r, max: maxHandshakeFrame}
}

// establish switches a handshake reader to the established connection:
// frames of up to maxFrame bytes, read through a buffer.
func (fr *frameReader) establish(maxFrame int) {
	fr.max = maxFrame
	fr.r = bufio.NewReaderSize(fr.r, readBufferSize)
}

// next reads one frame. The body aliases an internal buffer that the next
// call overwrites. A clean end of stream before a header is io.EOF; an end
// inside a frame is ErrTruncated; other read errors are returned wrapped.
func (fr *frameReader) next() (frameKind, []byte, error) {
	if _, err := io.ReadFull(fr.r, fr.hdr[:]); err != nil {
		return 0, nil, readErr(err, "header")
	}
	kind, n, err := parseFrameHeader(fr.hdr[:], fr.max)
	if err != nil {
		return 0, nil, err
	}
	if cap(fr.buf) > keptBody {
		if n > keptBody {
			fr.smallRun = 0
		} else if fr.smallRun++; fr.smallRun >= dropLargeAfter {
			fr.buf, fr.smallRun = nil, 0
		}
	}
	body, err := fr.readBody(n)
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, readErr(err, "body")
	}
	return kind, body, nil
}

// readBody reads a body of n bytes into the reused buffer. A body larger
// than the buffer is read in steps that start at bodyChunk and double, each
// allocated only when the previous one is full: an announced length costs
// memory as its bytes arrive, not before.
func (fr *frameReader) readBody(n int) ([]byte, error) {
	if n <= cap(fr.buf) {
		body := fr.buf[:n]
		_, err := io.ReadFull(fr.r, body)
		return body, err
	}
	body := fr.buf[:0]
	for len(body) < n {
		grown := make([]byte, min(n, max(2*cap(body), bodyChunk)))
		copy(grown, body)
		fr.buf = grown
		got, err := io.ReadFull(fr.r, grown[len(body):])
		body = grown[:len(body)+got]
		if err != nil {
			return nil, err
		}
	}
	return body, nil
}

func readErr(err error, where string) error {
	switch {
	case errors.Is(err, io.EOF):
		return io.EOF
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: stream ended inside the frame %s", ErrTruncated, where)
	default:
		return fmt.Errorf("remote: reading frame %s: %w", where, err)
	}
}

// isProtocolError reports whether err is the peer's fault at the protocol
// level (as opposed to a network error or a clean close).
func isProtocolError(err error) bool {
	return errors.Is(err, ErrMalformed) || errors.Is(err, ErrTruncated) ||
		errors.Is(err, ErrFrameTooLarge) || errors.Is(err, ErrBadVersion)
}
