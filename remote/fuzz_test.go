package remote

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// The fuzz targets below are the decoders of bytes that come from the
// network. Run each for a while with, for example:
//
//	go test ./remote -run '^$' -fuzz '^FuzzDecodeFrame$' -fuzztime 30s
//	go test ./remote -run '^$' -fuzz '^FuzzHandshake$' -fuzztime 30s
//	go test ./remote -run '^$' -fuzz '^FuzzSystemMessage$' -fuzztime 30s
//
// Without -fuzz, `go test` runs the seed corpus (f.Add below and
// testdata/fuzz/<FuzzName>/) as ordinary tests.

const fuzzMaxFrame = 64 << 10

func isTypedDecodeError(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, ErrTruncated) || errors.Is(err, ErrMalformed) ||
		errors.Is(err, ErrFrameTooLarge) || errors.Is(err, ErrBadVersion)
}

func seedStream() [][]byte {
	enc := newEnvelopeEncoder("a:1", "b:1")
	envs := []wireEnvelope{
		{target: PIDRef{"b:1", "t1"}, sender: PIDRef{"a:1", "s"}, serializer: SerializerProto, typeName: "google.protobuf.StringValue", payload: []byte{10, 2, 'h', 'i'}},
		{target: PIDRef{"c:3", "t2"}, sender: PIDRef{"d:4", "s2"}, serializer: SerializerJSON, typeName: "google.protobuf.StringValue", payload: []byte(`{"a":1}`)},
		{target: PIDRef{"b:1", "t3"}, serializer: SerializerSystem, payload: []byte{sysPing, 3}},
		{target: PIDRef{"b:1", "t5"}, sender: PIDRef{"a:1", "s"}, serializer: SerializerProto, typeName: "google.protobuf.StringValue", payload: []byte{10, 1, 'y'},
			header: actor.Header{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "tracestate": "k=v"}},
		{target: PIDRef{"b:1", "t6"}, serializer: SerializerProto, typeName: "google.protobuf.StringValue", header: actor.Header{}},
	}
	var batch []byte
	for i := range envs {
		batch = enc.append(batch, &envs[i])
	}
	h := hello{Version: ProtocolVersion, SystemName: "sys", NodeID: "node-a", Address: "a:1"}
	var all []byte
	all = appendFrame(all, kindHello, h.append(nil))
	all = appendFrame(all, kindEnvelopes, batch)
	all = appendFrame(all, kindPing, []byte{1})
	// A type name sent as a literal (as a full name table sends it): the
	// re-encoding defines it in the table instead, and must still decode
	// to the same envelope.
	literal := []byte{envHasSender}
	literal = appendString(literal, "t4")
	literal = appendString(literal, "s4")
	literal = append(literal, byte(SerializerProto))
	literal = appendUvarint(literal, nameLiteral)
	literal = appendString(literal, "google.protobuf.StringValue")
	literal = appendBytes(literal, []byte{10, 1, 'x'})
	// A header that claims more fields than it holds, and one with too
	// many fields.
	short := []byte{envHasHeader}
	short = appendString(short, "t7")
	short = appendUvarint(short, 3)
	short = appendString(short, "k")
	tooMany := []byte{envHasHeader}
	tooMany = appendString(tooMany, "t8")
	tooMany = appendUvarint(tooMany, maxHeaderFields+1)
	// A stream to one target: repeated fields, then a header (not reused),
	// a new sender, a literal type name twice, and a repeat whose payload
	// is cut short.
	var repeats []byte
	for i := range 4 {
		repeats = enc.append(repeats, &wireEnvelope{target: PIDRef{"b:1", "t1"}, serializer: SerializerProto, typeName: "google.protobuf.StringValue", payload: []byte{10, 1, byte('a' + i)}})
	}
	for range 2 {
		repeats = enc.append(repeats, &wireEnvelope{target: PIDRef{"b:1", "t1"}, serializer: SerializerProto, typeName: "google.protobuf.StringValue", header: actor.Header{"k": "v"}})
	}
	repeats = enc.append(repeats, &wireEnvelope{target: PIDRef{"b:1", "t1"}, sender: PIDRef{"a:1", "s9"}, serializer: SerializerProto, typeName: "google.protobuf.StringValue"})
	repeats = append(repeats, literal...)
	repeats = append(repeats, literal...)
	cut := append(append([]byte(nil), repeats...), literal[:len(literal)-2]...)
	return [][]byte{
		all,
		appendFrame(nil, kindEnvelopes, repeats),
		appendFrame(nil, kindEnvelopes, cut),
		appendFrame(nil, kindEnvelopes, short),
		appendFrame(nil, kindEnvelopes, tooMany),
		appendFrame(nil, kindEnvelopes, literal),
		appendFrame(nil, kindEnvelopes, batch),
		appendFrame(nil, kindReject, appendReject(nil, RejectBlocked, "blocked")),
		appendFrame(nil, kindReject, appendReject(nil, RejectBusy, "busy")),
		appendFrame(nil, kindHello, (&hello{Version: ProtocolVersion, SystemName: "sys", NodeID: "node-a", Address: "a:1", MaxFrame: 8 << 20}).append(nil)),
		appendFrame(nil, kindGoodbye, nil),
		appendFrame(nil, kindEnvelopes, nil),
		{'F', 'K', 2, 1, 0, 0, 0, 0, 0},
		{'F', 'K', 1, 5, 0, 0xff, 0xff, 0xff, 0xff},
		[]byte("GET / HTTP/1.1\r\n\r\n"),
	}
}

// decodeEnvelopes decodes the envelopes of body (their payloads copied) with or
// without the batch's repeat shortcut, up to the first error.
func decodeEnvelopes(d *envelopeDecoder, body []byte, noRepeat bool) ([]wireEnvelope, error) {
	b, err := d.batch(body)
	if err != nil {
		return nil, err
	}
	b.noRepeat = noRepeat
	var w wireEnvelope
	var got []wireEnvelope
	for {
		ok, err := b.next(&w)
		if !ok || err != nil {
			return got, err
		}
		c := w
		c.payload = bytes.Clone(w.payload)
		got = append(got, c)
	}
}

func FuzzDecodeFrame(f *testing.F) {
	for _, s := range seedStream() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fr := newFrameReader(bytes.NewReader(data), fuzzMaxFrame)
		dec, slow := newEnvelopeDecoder("b:1", "a:1"), newEnvelopeDecoder("b:1", "a:1")
		for {
			kind, body, err := fr.next()
			if err != nil {
				if !isTypedDecodeError(err) {
					t.Fatalf("untyped error %v", err)
				}
				return
			}
			if len(body) > fuzzMaxFrame || cap(fr.buf) > fuzzMaxFrame {
				t.Fatalf("frame body of %d bytes (buffer %d) beyond the maximum", len(body), cap(fr.buf))
			}
			switch kind {
			case kindEnvelopes:
				got, err := decodeEnvelopes(dec, body, false)
				// The batch's repeat shortcut decodes what a batch without
				// it decodes (see envelopeBatch.next).
				slowGot, slowErr := decodeEnvelopes(slow, body, true)
				require.Equal(t, slowGot, got)
				require.Equal(t, fmt.Sprint(slowErr), fmt.Sprint(err))
				if err != nil {
					if !errors.Is(err, ErrMalformed) {
						t.Fatalf("untyped batch error %v", err)
					}
					return
				}
				// Whatever decoded must re-encode and decode to the same.
				enc := newEnvelopeEncoder("a:1", "b:1")
				var re []byte
				for i := range got {
					re = enc.append(re, &got[i])
				}
				var again []wireEnvelope
				require.NoError(t, newEnvelopeDecoder("b:1", "a:1").decodeBatch(re, func(w *wireEnvelope) error {
					c := *w
					c.payload = bytes.Clone(w.payload)
					again = append(again, c)
					return nil
				}))
				// The name table slot is how the type name travelled (a
				// literal or a table entry), not what it is: the encoder
				// may choose differently from the fuzzed input.
				for i := range got {
					got[i].nameSlot = 0
				}
				for i := range again {
					again[i].nameSlot = 0
				}
				require.Equal(t, got, again)
			case kindHello, kindWelcome:
				if h, err := decodeHello(body); err == nil {
					h2, err := decodeHello(h.append(nil))
					require.NoError(t, err)
					require.Equal(t, h, h2)
				} else if !errors.Is(err, ErrMalformed) {
					t.Fatalf("untyped hello error %v", err)
				}
			case kindReject:
				r := decodeReject(body)
				require.NotZero(t, r.Code)
			case kindPing, kindPong:
				if _, err := decodeSeq(body); err != nil && !errors.Is(err, ErrMalformed) {
					t.Fatalf("untyped seq error %v", err)
				}
			}
		}
	})
}

// fuzzRW feeds the fuzz input as the peer's bytes and records ours.
type fuzzRW struct {
	in  *bytes.Reader
	out bytes.Buffer
}

func FuzzHandshake(f *testing.F) {
	peer := hello{Version: ProtocolVersion, SystemName: "sys", NodeID: "node-b", Address: "b:1"}
	for _, s := range seedStream() {
		f.Add(s, false)
	}
	f.Add(append(appendFrame(nil, kindHello, peer.append(nil)), appendFrame(nil, kindAck, nil)...), false)
	f.Add(appendFrame(nil, kindWelcome, peer.append(nil)), true)
	f.Add(appendFrame(nil, kindReject, appendReject(nil, RejectCluster, "other cluster")), true)
	wrong := peer
	wrong.SystemName = "other"
	f.Add(appendFrame(nil, kindWelcome, wrong.append(nil)), true)
	// The largest hello that can be valid, one byte more, and a header
	// announcing a large hello whose body never comes.
	big := hello{Version: ProtocolVersion, SystemName: strings.Repeat("s", maxSystemNameLen),
		NodeID: strings.Repeat("n", maxNodeIDLen), Address: strings.Repeat("a", maxAddressLen)}
	bigBody := big.append(nil)
	f.Add(appendFrame(nil, kindHello, bigBody), false)
	f.Add(appendFrame(nil, kindWelcome, append(bigBody, 0)), true)
	f.Add(appendFrameHeader(nil, kindHello, 4<<20), false)
	// A hello and a welcome with a frame size other than the default (the
	// optional MaxFrame field), one without a host, and a busy reject.
	sized := peer
	sized.MaxFrame = 8 << 20
	f.Add(append(appendFrame(nil, kindHello, sized.append(nil)), appendFrame(nil, kindAck, nil)...), false)
	f.Add(appendFrame(nil, kindWelcome, sized.append(nil)), true)
	hostless := peer
	hostless.Address = ":1"
	f.Add(appendFrame(nil, kindHello, hostless.append(nil)), false)
	f.Add(appendFrame(nil, kindReject, appendReject(nil, RejectBusy, "busy")), true)

	f.Fuzz(func(t *testing.T, data []byte, dialer bool) {
		hs := &handshake{
			local:   hello{Version: ProtocolVersion, SystemName: "sys", NodeID: "node-a", Address: "a:1"},
			blocked: func(id, addr string) bool { return id == "evil" || addr == "evil:1" },
		}
		rw := &fuzzRW{in: bytes.NewReader(data)}
		fr := newHandshakeReader(rw.in) // as the Node reads a handshake
		var got hello
		var err error
		if dialer {
			got, err = hs.dial(fr, &rw.out, "b:1")
		} else {
			got, err = hs.accept(fr, &rw.out)
		}
		if err == nil {
			// Success means every check passed.
			assert.Equal(t, uint64(ProtocolVersion), got.Version)
			assert.Equal(t, "sys", got.SystemName)
			assert.NotEqual(t, "node-a", got.NodeID)
			assert.NotEqual(t, "evil", got.NodeID)
			if dialer {
				assert.Equal(t, "b:1", got.Address)
			}
		} else {
			var rej *RejectError
			typed := errors.As(err, &rej) || errors.Is(err, ErrHandshake) || isProtocolError(err) ||
				errors.Is(err, ErrClusterMismatch) || errors.Is(err, ErrIdentityMismatch) || errors.Is(err, ErrBlocked)
			if !typed {
				t.Fatalf("untyped handshake error %v", err)
			}
		}
		// Until the handshake completed, no frame beyond the largest
		// possible hello is read or buffered, whatever was announced.
		if cap(fr.buf) > maxHandshakeFrame {
			t.Fatalf("handshake buffer of %d bytes, limit %d", cap(fr.buf), maxHandshakeFrame)
		}
		if h := frameHeaderSize; len(data) >= h && data[0] == magic0 && data[1] == magic1 && data[2] == ProtocolVersion &&
			data[4] == 0 && binary.BigEndian.Uint32(data[5:h]) > maxHandshakeFrame && frameKind(data[3]) <= maxFrameKind && data[3] != 0 {
			if !errors.Is(err, ErrFrameTooLarge) {
				t.Fatalf("first frame announces %d bytes, handshake error %v", binary.BigEndian.Uint32(data[5:h]), err)
			}
		}
		// What we wrote is well-formed frames of the kinds our role sends.
		out := newFrameReader(bytes.NewReader(rw.out.Bytes()), fuzzMaxFrame)
		for {
			kind, _, err := out.next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			if dialer {
				require.Contains(t, []frameKind{kindHello, kindAck, kindReject}, kind)
			} else {
				require.Contains(t, []frameKind{kindWelcome, kindReject}, kind)
			}
		}
	})
}

func FuzzSystemMessage(f *testing.F) {
	for _, m := range []SystemMessage{
		&WatchRequest{Watcher: PIDRef{"a", "1"}, Watchee: PIDRef{"b", "2"}},
		&TerminatedNotice{Who: PIDRef{"a", "1"}, Why: 1},
		&SpawnRequest{Name: "n", Kind: "k", RequestID: 9},
		&SpawnResponse{RequestID: 9, PID: PIDRef{"a", "1"}, Err: "e"},
		&SpawnResponse{RequestID: 9, Err: spawnErrTooMany + ": at the bound"},
		&Ping{Seq: 3},
		&StopRequest{},
		&PoisonPillRequest{},
		&DeadLetterResponse{Target: PIDRef{"b", "2"}},
		&DeadLetterResponse{Target: PIDRef{"b", "2"}, Reason: DeadLetterUnknownType},
		&UnwatchRequest{Watcher: PIDRef{"a", "1"}, Watchee: PIDRef{"b", "2"}},
		&TerminatedNotice{Who: PIDRef{"a", "1"}, Why: TerminatedNotFound},
		&TerminatedNotice{Who: PIDRef{"a", "1"}, Why: TerminatedAddressUnreachable},
		&TerminatedNotice{Who: PIDRef{"a", "1"}, Why: 200}, // a newer peer's reason
		&TerminatedNotice{Who: PIDRef{"a", "1"}, Why: TerminatedWatchRefused},
		&Pong{Seq: 1 << 40},
		&DeadLetterResponse{Target: PIDRef{"b", "2"}, Reason: DeadLetterFrameTooLarge},
		&DeadLetterResponse{Target: PIDRef{"b", "2"}, Reason: DeadLetterMailboxFull},
		&DeadLetterResponse{Target: PIDRef{"b", "2"}, Reason: 200}, // a newer peer's reason
		&WatchesDropped{NodeID: "n1"},
		&WatchesDropped{},
	} {
		b, err := AppendSystemMessage(nil, m)
		require.NoError(f, err)
		f.Add(b)
	}
	// Reason 0 is written as no byte: a 0 byte is malformed.
	f.Add(append(appendPIDRef([]byte{sysDeadLetterResponse}, PIDRef{"b", "2"}), 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeSystemMessage(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnknownType) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		b, err := AppendSystemMessage(nil, m)
		require.NoError(t, err)
		m2, err := DecodeSystemMessage(b)
		require.NoError(t, err)
		require.Equal(t, m, m2)
		if dl, ok := m.(*DeadLetterResponse); ok {
			// A reason known here stands for one sentinel, which maps
			// back to it when this node answers; any other reads as none.
			if err := dl.Reason.Err(); err != nil {
				require.Equal(t, dl.Reason, deadLetterReason(err))
			}
		}
	})
}
