package remote

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
)

// hello is what each side says about itself before any envelope flows.
type hello struct {
	Version    uint64 // ProtocolVersion
	SystemName string // must be equal on both sides
	NodeID     string // unique per process incarnation
	Address    string // the advertised address PIDs of this node carry
	// MaxFrame is the side's Config.MaxFrameSize: the other side sends it
	// no larger frame, so that an envelope it cannot take is refused
	// where it is sent (ErrFrameTooLarge) instead of closing the
	// connection at the reader. On the wire it follows Address, and only
	// when it is not defaultMaxFrameSize: a node that predates the field
	// refuses any byte after Address, so a node at the default must say
	// its hello as such a node did, or the two never connect during a
	// rolling upgrade. Absent, it reads as defaultMaxFrameSize (a node at
	// the default; for an older node, the limit it most likely has)
	// (TestHelloAtDefaultFrameSizeReadByOlderNodes,
	// TestPeerHelloWithoutFrameSizeMeansDefault). 0 appends as absent.
	MaxFrame uint64
}

const (
	maxSystemNameLen = 255
	maxNodeIDLen     = 255
	maxReasonLen     = 512

	// maxHandshakeFrame is the frame limit until the handshake completed:
	// the largest hello or welcome (a version and three strings at their
	// limits, each with a two-byte length), which is also above the
	// largest reject (a code and a 512-byte reason) and the empty ack.
	maxHandshakeFrame = binary.MaxVarintLen64 + (2 + maxSystemNameLen) + (2 + maxNodeIDLen) + (2 + maxAddressLen) + binary.MaxVarintLen64
)

func (h *hello) append(dst []byte) []byte {
	dst = appendUvarint(dst, h.Version)
	dst = appendString(dst, h.SystemName)
	dst = appendString(dst, h.NodeID)
	dst = appendString(dst, h.Address)
	if h.MaxFrame != 0 && h.MaxFrame != defaultMaxFrameSize {
		dst = appendUvarint(dst, h.MaxFrame)
	}
	return dst
}

func decodeHello(body []byte) (hello, error) {
	c := cursor{b: body}
	h := hello{Version: c.uvarint()}
	h.SystemName = c.str("system name", maxSystemNameLen)
	h.NodeID = c.str("node id", maxNodeIDLen)
	h.Address = c.str("address", maxAddressLen)
	h.MaxFrame = defaultMaxFrameSize
	if c.err == nil && c.off < len(c.b) {
		if h.MaxFrame = c.uvarint(); c.err == nil && (h.MaxFrame < MinFrameSize || h.MaxFrame > MaxFrameSize) {
			c.fail("maximum frame size out of range")
		}
	}
	if err := c.finish("hello"); err != nil {
		return hello{}, err
	}
	if h.NodeID == "" || h.Address == "" {
		return hello{}, fmt.Errorf("%w: hello without node id or address", ErrMalformed)
	}
	if !isHostPort(h.Address) {
		return hello{}, fmt.Errorf("%w: hello address %q is not host:port", ErrMalformed, h.Address)
	}
	return h, nil
}

// isHostPort reports whether addr is a host:port with both parts: what a
// hello's address must be. It is what the peer's PIDs carry; anything
// else, such as actor.LocalAddress, would let the peer's messages name
// this node's own processes as its. Config.Validate asks it of
// AdvertisedAddress and Node.Start of the address it takes from its
// listener, so that a node never advertises one its peers refuse.
func isHostPort(addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	return err == nil && host != "" && port != ""
}

func appendReject(dst []byte, code RejectCode, reason string) []byte {
	if len(reason) > maxReasonLen {
		reason = reason[:maxReasonLen]
	}
	return appendString(appendUvarint(dst, uint64(code)), reason)
}

func decodeReject(body []byte) *RejectError {
	c := cursor{b: body}
	code := c.uvarint()
	reason := c.str("reason", maxReasonLen)
	if c.finish("reject") != nil || code == 0 || code > uint64(RejectBusy) {
		return &RejectError{Code: RejectMalformed, Reason: "unreadable reject frame"}
	}
	return &RejectError{Code: RejectCode(code), Reason: reason}
}

// handshake holds one side's parameters. The I/O functions below are pure
// over a frameReader and an io.Writer (no goroutines, no clocks), so they can
// be fuzzed on byte slices; the caller sets the connection deadline.
type handshake struct {
	local hello
	// blocked reports whether a node ID or address is on the BlockList.
	blocked func(nodeID, address string) bool
	// verify checks the hello against what the connection proves about
	// the peer (its certificate); nil: nothing to check.
	verify func(peer hello) error
	// admit decides, after every other check passed, whether this
	// connection may become the one for the peer (the simultaneous-dial
	// tie-break). It may record a pending admission.
	admit func(peer hello) error
}

// check validates the peer's hello against ours. dialed is the address we
// dialed ("" on the accepting side).
func (hs *handshake) check(peer hello, dialed string) error {
	switch {
	case peer.Version != ProtocolVersion:
		return fmt.Errorf("%w: peer hello says version %d, this node %d", ErrBadVersion, peer.Version, ProtocolVersion)
	case peer.SystemName != hs.local.SystemName:
		return fmt.Errorf("%w: peer %q is in system %q, this node in %q", ErrClusterMismatch, peer.Address, peer.SystemName, hs.local.SystemName)
	case peer.NodeID == hs.local.NodeID || peer.Address == hs.local.Address:
		return fmt.Errorf("%w: peer claims this node's own id or address", ErrIdentityMismatch)
	case hs.blocked != nil && hs.blocked(peer.NodeID, peer.Address):
		return fmt.Errorf("%w: node %s at %q", ErrBlocked, peer.NodeID, peer.Address)
	case dialed != "" && peer.Address != dialed:
		return fmt.Errorf("%w: dialed %q but the node there advertises %q", ErrIdentityMismatch, dialed, peer.Address)
	}
	if hs.verify != nil {
		if err := hs.verify(peer); err != nil {
			return err
		}
	}
	if hs.admit != nil {
		return hs.admit(peer)
	}
	return nil
}

// sendReject writes a reject frame, best effort: the connection is about to
// close anyway, so a write error is ignored.
func sendReject(w io.Writer, err error) {
	_, _ = w.Write(appendFrame(nil, kindReject, appendReject(nil, rejectCodeOf(err), err.Error())))
}

// accept runs the accepting side: read hello, check it, answer welcome or
// reject, wait for the dialer's ack. On error the connection must be closed;
// a reject frame has been sent where the protocol allows one.
func (hs *handshake) accept(fr *frameReader, w io.Writer) (hello, error) {
	kind, body, err := fr.next()
	if err != nil {
		if isProtocolError(err) {
			sendReject(w, err)
		}
		return hello{}, handshakeErr(err)
	}
	if kind != kindHello {
		err := fmt.Errorf("%w: expected hello, got %v", ErrMalformed, kind)
		sendReject(w, err)
		return hello{}, err
	}
	peer, err := decodeHello(body)
	if err == nil {
		err = hs.check(peer, "")
	}
	if err != nil {
		sendReject(w, err)
		return peer, err
	}
	if _, err := w.Write(appendFrame(nil, kindWelcome, hs.local.append(nil))); err != nil {
		return peer, handshakeErr(err)
	}
	kind, body, err = fr.next()
	switch {
	case err != nil:
		return peer, handshakeErr(err)
	case kind == kindReject:
		return peer, decodeReject(body)
	case kind != kindAck || len(body) != 0:
		return peer, fmt.Errorf("%w: expected ack, got %v of %d bytes", ErrMalformed, kind, len(body))
	}
	return peer, nil
}

// dial runs the dialing side: send hello, read welcome or reject, check the
// welcome (the node must advertise the address we dialed), send ack.
func (hs *handshake) dial(fr *frameReader, w io.Writer, dialed string) (hello, error) {
	if _, err := w.Write(appendFrame(nil, kindHello, hs.local.append(nil))); err != nil {
		return hello{}, handshakeErr(err)
	}
	kind, body, err := fr.next()
	if err != nil {
		return hello{}, handshakeErr(err)
	}
	switch kind {
	case kindReject:
		return hello{}, decodeReject(body)
	case kindWelcome:
	default:
		err := fmt.Errorf("%w: expected welcome, got %v", ErrMalformed, kind)
		sendReject(w, err)
		return hello{}, err
	}
	peer, err := decodeHello(body)
	if err == nil {
		err = hs.check(peer, dialed)
	}
	if err != nil {
		sendReject(w, err)
		return peer, err
	}
	if _, err := w.Write(appendFrame(nil, kindAck, nil)); err != nil {
		return peer, handshakeErr(err)
	}
	return peer, nil
}

// handshakeErr keeps protocol errors as they are and wraps transport errors
// (EOF, timeouts, TLS) in ErrHandshake.
func handshakeErr(err error) error {
	if isProtocolError(err) || errors.Is(err, ErrHandshake) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrHandshake, err)
}
