package remote

import (
	"fmt"

	"github.com/fraktor-go/fraktor/actor"
)

// PIDRef names a process on some node: the node's advertised address and the
// process ID there. It is the wire form of actor.PID; the zero value means
// "no process" (for example an envelope without a sender).
type PIDRef struct {
	Address string
	ID      string
}

// IsZero reports whether p names no process.
func (p PIDRef) IsZero() bool { return p.Address == "" && p.ID == "" }

// String returns "address/id".
func (p PIDRef) String() string { return p.Address + "/" + p.ID }

// Envelope is one message travelling between nodes: its target, its optional
// sender, its optional header (trace context, for example; see
// actor.MessageEnvelope) and the message itself (serialized by the Node's
// Serializers on Send, deserialized before the Deliver hook sees it).
type Envelope struct {
	Target  PIDRef
	Sender  PIDRef       // zero when there is no sender
	Header  actor.Header // nil when there is none
	Message any
}

// Field limits enforced on both the encoding and the decoding side.
const (
	maxAddressLen    = 1024
	maxIDLen         = 4096
	maxTypeNameLen   = 1024
	maxInternedNames = 1024

	// A header holds at most maxHeaderFields entries of at most
	// maxHeaderBytes bytes of keys and values in all.
	maxHeaderFields = 64
	maxHeaderBytes  = 16 << 10
)

// wireEnvelope is an Envelope after serialization: what the batch codec
// writes and reads. On the decoding side typeName and the PIDRef strings are
// fresh strings; payload aliases the frame buffer.
type wireEnvelope struct {
	target     PIDRef
	sender     PIDRef
	serializer SerializerID
	typeName   string
	payload    []byte
	header     actor.Header // nil: none
	nameSlot   int          // decoding side: the type name's entry in the name table, or -1
}

// Per-envelope flag bits.
const (
	envHasSender  = 1 << 0 // a sender follows
	envTargetAddr = 1 << 1 // the target address is written (else: the receiver's address)
	envSenderAddr = 1 << 2 // the sender address is written (else: the sending node's address)
	envHasHeader  = 1 << 3 // a header follows the sender: a count, then key and value strings
	envFlagsMask  = envHasSender | envTargetAddr | envSenderAddr | envHasHeader
)

// Type name tags: 0 = literal, 1 = literal that is also added to the
// connection's name table, n ≥ 2 = entry n-2 of that table.
const (
	nameLiteral = 0
	nameDefine  = 1
	nameRefBase = 2
)

// envelope is the Envelope of w with msg as its message.
func (w *wireEnvelope) envelope(msg any) Envelope {
	return Envelope{Target: w.target, Sender: w.sender, Header: w.header, Message: msg}
}

// check validates the field lengths.
func (w *wireEnvelope) check() error {
	switch {
	case len(w.target.Address) > maxAddressLen || len(w.sender.Address) > maxAddressLen:
		return fmt.Errorf("%w: address longer than %d bytes", ErrMalformed, maxAddressLen)
	case len(w.target.ID) > maxIDLen || len(w.sender.ID) > maxIDLen:
		return fmt.Errorf("%w: process ID longer than %d bytes", ErrMalformed, maxIDLen)
	case len(w.typeName) > maxTypeNameLen:
		return fmt.Errorf("%w: type name longer than %d bytes", ErrMalformed, maxTypeNameLen)
	case len(w.header) > maxHeaderFields:
		return fmt.Errorf("%w: header of %d fields, more than %d", ErrMalformed, len(w.header), maxHeaderFields)
	case headerBytes(w.header) > maxHeaderBytes:
		return fmt.Errorf("%w: header longer than %d bytes", ErrMalformed, maxHeaderBytes)
	}
	return nil
}

// headerBytes is the length of h's keys and values.
func headerBytes(h actor.Header) int {
	n := 0
	for k, v := range h {
		n += len(k) + len(v)
	}
	return n
}

// headerEncodedLen is the encoded size of h (0 for no header).
func headerEncodedLen(h actor.Header) int {
	if h == nil {
		return 0
	}
	n := uvarintLen(uint64(len(h)))
	for k, v := range h {
		n += stringLen(len(k)) + stringLen(len(v))
	}
	return n
}

// check validates what Send can check before the message is encoded: the
// field lengths, and that the envelope without its payload fits a frame.
func (it *outItem) check(maxFrame int) error {
	// The PIDs as they are (the writer puts this node's address in place of
	// actor.LocalAddress, and checks the full size again).
	var w wireEnvelope
	if it.target != nil {
		w.target = PIDRef{Address: it.target.Address, ID: it.target.ID}
	}
	if it.sender != nil {
		w.sender = PIDRef{Address: it.sender.Address, ID: it.sender.ID}
	}
	_, w.header = actor.UnwrapEnvelope(it.msg)
	w.typeName = it.codec.name
	if err := w.check(); err != nil {
		return err
	}
	if l := w.maxEncodedLen(); l > maxFrame {
		return fmt.Errorf("%w: envelope of at least %d bytes, maximum frame %d", ErrFrameTooLarge, l, maxFrame)
	}
	return nil
}

// maxEncodedLen is an upper bound of the envelope's encoded size whatever
// the connection's name table holds.
func (w *wireEnvelope) maxEncodedLen() int {
	return 1 + stringLen(len(w.target.Address)) + stringLen(len(w.target.ID)) +
		stringLen(len(w.sender.Address)) + stringLen(len(w.sender.ID)) +
		headerEncodedLen(w.header) +
		1 + 1 + stringLen(len(w.typeName)) + stringLen(len(w.payload))
}

// envelopeEncoder writes envelopes for one direction of one connection. It
// omits addresses that the receiver can infer and interns type names. Owned
// by the connection's writer goroutine.
type envelopeEncoder struct {
	localAddr string // our advertised address: the default sender address
	peerAddr  string // the receiver's advertised address: the default target address
	names     map[string]uint64
	lastName  string // the last name written as a reference, and its index
	lastIdx   uint64
}

func newEnvelopeEncoder(localAddr, peerAddr string) *envelopeEncoder {
	return &envelopeEncoder{localAddr: localAddr, peerAddr: peerAddr, names: make(map[string]uint64)}
}

func (e *envelopeEncoder) append(dst []byte, w *wireEnvelope) []byte {
	var flags byte
	hasSender := !w.sender.IsZero()
	if hasSender {
		flags |= envHasSender
		if w.sender.Address != e.localAddr {
			flags |= envSenderAddr
		}
	}
	if w.target.Address != e.peerAddr {
		flags |= envTargetAddr
	}
	if w.header != nil {
		flags |= envHasHeader
	}
	dst = append(dst, flags)
	if flags&envTargetAddr != 0 {
		dst = appendString(dst, w.target.Address)
	}
	dst = appendString(dst, w.target.ID)
	if hasSender {
		if flags&envSenderAddr != 0 {
			dst = appendString(dst, w.sender.Address)
		}
		dst = appendString(dst, w.sender.ID)
	}
	if w.header != nil {
		dst = appendUvarint(dst, uint64(len(w.header)))
		for k, v := range w.header {
			dst = appendString(dst, k)
			dst = appendString(dst, v)
		}
	}
	dst = append(dst, byte(w.serializer))
	if w.typeName == e.lastName && w.typeName != "" {
		dst = appendUvarint(dst, e.lastIdx+nameRefBase) // a run of one type: no map lookup
	} else if idx, ok := e.names[w.typeName]; ok {
		e.lastName, e.lastIdx = w.typeName, idx
		dst = appendUvarint(dst, idx+nameRefBase)
	} else if len(e.names) < maxInternedNames && w.typeName != "" {
		e.names[w.typeName] = uint64(len(e.names))
		dst = appendUvarint(dst, nameDefine)
		dst = appendString(dst, w.typeName)
	} else {
		dst = appendUvarint(dst, nameLiteral)
		dst = appendString(dst, w.typeName)
	}
	return appendBytes(dst, w.payload)
}

// envelopeDecoder reads the envelopes of one direction of one connection.
// Owned by the connection's reader goroutine.
//
// Process IDs and addresses repeat from envelope to envelope, so the decoder
// interns them: a string it has seen recently is returned again rather than
// allocated. The table is bounded in entries and in bytes; when full it
// starts over.
type envelopeDecoder struct {
	localAddr string // our advertised address: the default target address
	peerAddr  string // the sender's advertised address: the default sender address
	names     []string
	codecs    []*typeCodec // the codec resolved for names[i], once it resolved
	strs      map[string]string
	strBytes  int    // the bytes of the strings in strs
	last      string // the last string str returned from strs

	// target is the local process the Remote extension last delivered a
	// user message of this connection to (Remote.deliverInbound).
	target *target
}

// maxInterned and maxInternedBytes bound the decoder's table of interned
// strings. The count alone would let a peer that names 4 096 distinct
// process IDs of maxIDLen bytes make the table hold 16 MiB for the
// connection's life, four times the default MaxFrameSize; the byte bound
// keeps it to 1 MiB (TestEnvelopeDecodeErrors, "interned strings bounded
// in bytes") and binds first only on IDs longer than 256 bytes on average,
// far above generated IDs and names.
const (
	maxInterned      = 4096
	maxInternedBytes = 1 << 20
)

func newEnvelopeDecoder(localAddr, peerAddr string) *envelopeDecoder {
	return &envelopeDecoder{localAddr: localAddr, peerAddr: peerAddr, strs: make(map[string]string)}
}

// str reads a string field, interned.
func (d *envelopeDecoder) str(c *cursor, what string, limit int) string {
	b := c.bytesField(what, limit)
	if c.err != nil {
		return ""
	}
	if string(b) == d.last { // a stream to one actor: no hashing either
		return d.last
	}
	if s, ok := d.strs[string(b)]; ok { // no allocation for the lookup
		d.last = s
		return s
	}
	if len(d.strs) >= maxInterned || d.strBytes+len(b) > maxInternedBytes {
		clear(d.strs)
		d.strBytes = 0
	}
	s := string(b)
	d.strs[s] = s
	d.strBytes += len(s)
	return s
}

// codec returns the codec of w from ser, remembering it per name table
// entry: the registry only grows, so a name that resolved once keeps its
// codec. It returns ErrUnknownType as Deserialize does.
func (d *envelopeDecoder) codec(ser *Serializers, w *wireEnvelope) (*typeCodec, error) {
	if w.nameSlot >= 0 {
		if c := d.codecs[w.nameSlot]; c != nil && c.ser == w.serializer {
			return c, nil
		}
	}
	c, err := ser.codecNamed(w.serializer, w.typeName)
	if err == nil && w.nameSlot >= 0 {
		d.codecs[w.nameSlot] = c
	}
	return c, err
}

// decodeBatch calls fn for each envelope of an envelopes frame body, in
// order. The *wireEnvelope passed to fn is reused: fn must copy what it keeps
// beyond the call, and must not change it (see envelopeBatch.next). A malformed body stops at the first bad envelope with
// ErrMalformed; envelopes before it have been passed to fn already.
func (d *envelopeDecoder) decodeBatch(body []byte, fn func(*wireEnvelope) error) error {
	b, err := d.batch(body)
	if err != nil {
		return err
	}
	var w wireEnvelope
	for {
		ok, err := b.next(&w)
		if !ok || err != nil {
			return err
		}
		if err := fn(&w); err != nil {
			return err
		}
	}
}

// envelopeBatch reads the envelopes of one envelopes frame body, one at a
// time, into storage the caller provides (next). The connection's reader
// keeps that storage on its stack, where decodeBatch's, reached through fn,
// escapes to the heap. (next's stores through its pointer still pass the
// GC write barrier while the collector marks; its repeat shortcut is what
// skips them for a stream to one actor.)
type envelopeBatch struct {
	d *envelopeDecoder
	c cursor

	// rep is the previous envelope's bytes before its payload, when an
	// envelope that starts with the same bytes has the same fields (see
	// next); nil otherwise. noRepeat turns it off (tests compare).
	rep      []byte
	noRepeat bool
}

// batch starts reading body, which must not be empty (ErrMalformed).
func (d *envelopeDecoder) batch(body []byte) (envelopeBatch, error) {
	if len(body) == 0 {
		return envelopeBatch{}, fmt.Errorf("%w: empty envelope batch", ErrMalformed)
	}
	return envelopeBatch{d: d, c: cursor{b: body}}, nil
}

// next decodes the next envelope into w and reports true, or reports false
// at the end of the body. w's strings and payload alias the body or the
// decoder's tables (see wireEnvelope). A malformed envelope is ErrMalformed,
// and the batch must not be read further. The caller passes the same w to
// every call of a batch and leaves its fields as next set them.
//
// A stream to one actor repeats everything but the payload from envelope
// to envelope: when an envelope starts with the same bytes as the previous
// one's fields (b.rep), they decode to the same values, which w still
// holds, so next reads only the payload. In the one-way benchmark's peer,
// parsing those fields again (and storing them into w, a GC write barrier
// each while the collector marks) was most of next's 14 % of the CPU. A
// header is not reused (each message gets its own map), nor a type name
// definition (it adds to the name table). TestEnvelopeBatchRepeats pins
// it; FuzzDecodeFrame checks the decoding against a batch without it.
func (b *envelopeBatch) next(w *wireEnvelope) (bool, error) {
	c, d := &b.c, b.d
	if c.empty() {
		return false, nil
	}
	if n := len(b.rep); n > 0 && n < c.left() && string(c.b[c.off:c.off+n]) == string(b.rep) {
		c.off += n
		w.payload = c.bytesField("payload", 0)
		if c.err != nil {
			return false, c.err
		}
		return true, nil
	}
	start, names := c.off, len(d.names)
	flags := c.byte1()
	if flags&^envFlagsMask != 0 {
		return false, fmt.Errorf("%w: reserved envelope flags %#02x", ErrMalformed, flags)
	}
	if flags&envHasSender == 0 && flags&envSenderAddr != 0 {
		return false, fmt.Errorf("%w: sender address without a sender", ErrMalformed)
	}
	w.target.Address = d.localAddr
	if flags&envTargetAddr != 0 {
		w.target.Address = d.str(c, "target address", maxAddressLen)
	}
	w.target.ID = d.str(c, "target id", maxIDLen)
	w.sender = PIDRef{}
	if flags&envHasSender != 0 {
		w.sender.Address = d.peerAddr
		if flags&envSenderAddr != 0 {
			w.sender.Address = d.str(c, "sender address", maxAddressLen)
		}
		w.sender.ID = d.str(c, "sender id", maxIDLen)
	}
	w.header = nil
	if flags&envHasHeader != 0 {
		w.header = d.header(c)
	}
	w.serializer = SerializerID(c.byte1())
	w.typeName, w.nameSlot = d.typeName(c)
	b.rep = nil
	if c.err == nil && flags&envHasHeader == 0 && len(d.names) == names && !b.noRepeat {
		b.rep = c.b[start:c.off]
	}
	w.payload = c.bytesField("payload", 0)
	if c.err != nil {
		return false, c.err
	}
	return true, nil
}

// header reads a header: fresh strings in a fresh map, which the
// delivered message keeps.
func (d *envelopeDecoder) header(c *cursor) actor.Header {
	n := c.uvarint()
	if c.err != nil {
		return nil
	}
	if n > maxHeaderFields {
		c.fail("header of %d fields, more than %d", n, maxHeaderFields)
		return nil
	}
	h := make(actor.Header, n)
	total := 0
	for range n {
		k := c.bytesField("header key", maxHeaderBytes)
		v := c.bytesField("header value", maxHeaderBytes)
		if c.err != nil {
			return nil
		}
		if total += len(k) + len(v); total > maxHeaderBytes {
			c.fail("header longer than %d bytes", maxHeaderBytes)
			return nil
		}
		h[string(k)] = string(v)
	}
	return h
}

// typeName reads a type name and returns it with its name table entry (-1
// for a literal).
func (d *envelopeDecoder) typeName(c *cursor) (string, int) {
	tag := c.uvarint()
	if c.err != nil {
		return "", -1
	}
	switch {
	case tag == nameLiteral:
		return c.str("type name", maxTypeNameLen), -1
	case tag == nameDefine:
		if len(d.names) >= maxInternedNames {
			c.fail("type name table full (%d entries)", maxInternedNames)
			return "", -1
		}
		name := c.str("type name", maxTypeNameLen)
		if c.err != nil {
			return "", -1
		}
		d.names = append(d.names, name)
		d.codecs = append(d.codecs, nil)
		return name, len(d.names) - 1
	default:
		idx := tag - nameRefBase
		if idx >= uint64(len(d.names)) {
			c.fail("type name reference %d beyond the table (%d entries)", idx, len(d.names))
			return "", -1
		}
		return d.names[idx], int(idx)
	}
}
