package remote

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

func TestFrameHeaderErrors(t *testing.T) {
	good := appendFrameHeader(nil, kindEnvelopes, 10)
	mutate := func(i int, b byte) []byte {
		h := bytes.Clone(good)
		h[i] = b
		return h
	}
	big := bytes.Clone(good)
	binary.BigEndian.PutUint32(big[5:], 4097)
	tests := []struct {
		name string
		h    []byte
		want error
	}{
		{"short", good[:5], ErrTruncated},
		{"bad magic", mutate(0, 'X'), ErrMalformed},
		{"bad version", mutate(2, 2), ErrBadVersion},
		{"kind zero", mutate(3, 0), ErrMalformed},
		{"unknown kind", mutate(3, 99), ErrMalformed},
		{"reserved flags", mutate(4, 1), ErrMalformed},
		{"too large", big, ErrFrameTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := parseFrameHeader(tt.h, 4096)
			require.ErrorIs(t, err, tt.want)
		})
	}
	kind, n, err := parseFrameHeader(good, 4096)
	require.NoError(t, err)
	assert.Equal(t, kindEnvelopes, kind)
	assert.Equal(t, 10, n)
}

func TestFrameReader(t *testing.T) {
	var stream []byte
	stream = appendFrame(stream, kindPing, []byte{7})
	stream = appendFrame(stream, kindGoodbye, nil)
	fr := newFrameReader(bytes.NewReader(stream), 4096)
	kind, body, err := fr.next()
	require.NoError(t, err)
	assert.Equal(t, kindPing, kind)
	assert.Equal(t, []byte{7}, body)
	kind, body, err = fr.next()
	require.NoError(t, err)
	assert.Equal(t, kindGoodbye, kind)
	assert.Empty(t, body)
	_, _, err = fr.next()
	assert.ErrorIs(t, err, io.EOF)

	t.Run("truncated body", func(t *testing.T) {
		f := appendFrame(nil, kindPing, []byte{1, 2, 3})
		_, _, err := newFrameReader(bytes.NewReader(f[:len(f)-1]), 4096).next()
		assert.ErrorIs(t, err, ErrTruncated)
	})
	t.Run("truncated header", func(t *testing.T) {
		_, _, err := newFrameReader(bytes.NewReader([]byte{'F', 'K', 1}), 4096).next()
		assert.ErrorIs(t, err, ErrTruncated)
	})
	t.Run("oversize announced, nothing allocated", func(t *testing.T) {
		h := appendFrameHeader(nil, kindEnvelopes, 0)
		binary.BigEndian.PutUint32(h[5:], 1<<31)
		fr := newFrameReader(bytes.NewReader(h), 4096)
		_, _, err := fr.next()
		assert.ErrorIs(t, err, ErrFrameTooLarge)
		assert.Nil(t, fr.buf, "no body buffer may be allocated for a refused frame")
	})
}

func TestEnvelopeRoundTrip(t *testing.T) {
	envs := []wireEnvelope{
		{target: PIDRef{"b:1", "actor/1"}, sender: PIDRef{"a:1", "future/9"}, serializer: SerializerProto, typeName: "x.Y", payload: []byte("p1")},
		{target: PIDRef{"b:1", "actor/2"}, serializer: SerializerJSON, typeName: "x.Y", payload: nil},
		{target: PIDRef{"elsewhere:5", "z"}, sender: PIDRef{"third:3", "s"}, serializer: SerializerSystem, payload: []byte{1, 2}},
		{target: PIDRef{"b:1", ""}, sender: PIDRef{"", "only-id"}, serializer: SerializerJSON, typeName: "x.Y", payload: []byte("{}")},
	}
	enc := newEnvelopeEncoder("a:1", "b:1")
	dec := newEnvelopeDecoder("b:1", "a:1")
	// Two frames on the same connection: the second uses the name table.
	for round := range 2 {
		var body []byte
		for i := range envs {
			body = enc.append(body, &envs[i])
			assert.LessOrEqual(t, len(body), sumMax(envs[:i+1]))
		}
		var got []wireEnvelope
		require.NoError(t, dec.decodeBatch(body, func(w *wireEnvelope) error {
			c := *w
			c.payload = bytes.Clone(w.payload)
			got = append(got, c)
			return nil
		}))
		require.Len(t, got, len(envs), "round %d", round)
		for i := range envs {
			want := envs[i]
			if want.payload == nil {
				want.payload = []byte{}
			}
			want.nameSlot = -1 // no type name: a literal
			if want.typeName != "" {
				want.nameSlot = 0 // the one entry of the name table
			}
			assert.Equal(t, want, got[i], "round %d envelope %d", round, i)
		}
	}
	assert.Len(t, dec.names, 1, "the repeated type name is interned once")
}

func sumMax(ws []wireEnvelope) int {
	n := 0
	for i := range ws {
		n += ws[i].maxEncodedLen()
	}
	return n
}

func TestEnvelopeDecodeErrors(t *testing.T) {
	valid := newEnvelopeEncoder("a", "b").append(nil, &wireEnvelope{target: PIDRef{"b", "t"}, serializer: SerializerJSON, typeName: "n", payload: []byte("x")})
	tests := []struct {
		name string
		body []byte
	}{
		{"empty batch", nil},
		{"reserved flag", []byte{0x80}},
		{"sender address without sender", []byte{envSenderAddr}},
		{"truncated", valid[:len(valid)-1]},
		{"length beyond body", []byte{0, 0x7f}},
		{"bad uvarint", []byte{0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{"name ref beyond table", []byte{0, 1, 't', 3, 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := newEnvelopeDecoder("b", "a").decodeBatch(tt.body, func(*wireEnvelope) error { return nil })
			require.ErrorIs(t, err, ErrMalformed)
		})
	}
	t.Run("interned strings bounded in bytes", func(t *testing.T) {
		// Distinct process IDs of the largest size, fewer than
		// maxInterned of them.
		enc := newEnvelopeEncoder("a", "b")
		dec := newEnvelopeDecoder("b", "a")
		id := []byte(strings.Repeat("x", maxIDLen))
		for i := range maxInterned - 1 {
			copy(id, itoa(i))
			body := enc.append(nil, &wireEnvelope{target: PIDRef{"b", string(id)}, serializer: SerializerJSON, typeName: "n", payload: []byte("x")})
			require.NoError(t, dec.decodeBatch(body, func(*wireEnvelope) error { return nil }))
		}
		held := 0
		for k := range dec.strs {
			held += len(k)
		}
		assert.LessOrEqual(t, held, maxInternedBytes)
	})
	t.Run("name table bounded", func(t *testing.T) {
		enc := newEnvelopeEncoder("a", "b")
		var body []byte
		for i := range maxInternedNames + 10 {
			body = enc.append(body, &wireEnvelope{target: PIDRef{"b", "t"}, typeName: strings.Repeat("n", 1+i%7) + string(rune('A'+i%26)) + itoa(i)})
		}
		dec := newEnvelopeDecoder("b", "a")
		n := 0
		require.NoError(t, dec.decodeBatch(body, func(*wireEnvelope) error { n++; return nil }))
		assert.Equal(t, maxInternedNames+10, n)
		assert.Len(t, dec.names, maxInternedNames)
		// A peer that defines more names than allowed is malformed.
		evil := []byte{0, 1, 't', 1, nameDefine, 1, 'x', 0}
		dec.names = make([]string, maxInternedNames)
		require.ErrorIs(t, dec.decodeBatch(evil, func(*wireEnvelope) error { return nil }), ErrMalformed)
	})
	t.Run("callback error stops", func(t *testing.T) {
		stop := errors.New("stop")
		require.ErrorIs(t, newEnvelopeDecoder("b", "a").decodeBatch(valid, func(*wireEnvelope) error { return stop }), stop)
	})
}

func itoa(i int) string { return string(binary.AppendUvarint(nil, uint64(i))) }

func TestSystemMessagesRoundTrip(t *testing.T) {
	a, b := PIDRef{"n1:1", "w"}, PIDRef{"n2:2", "x/y"}
	msgs := []SystemMessage{
		&WatchRequest{Watcher: a, Watchee: b},
		&UnwatchRequest{Watcher: b, Watchee: a},
		&TerminatedNotice{Who: b, Why: TerminatedAddressTerminated},
		&SpawnRequest{Name: "n", Kind: "k", RequestID: 1 << 40},
		&SpawnResponse{RequestID: 3, PID: a, Err: "no such kind"},
		&Ping{Seq: 5},
		&Pong{Seq: 1<<64 - 1},
		&StopRequest{},
		&PoisonPillRequest{},
		&DeadLetterResponse{Target: b},
	}
	for _, m := range msgs {
		b, err := AppendSystemMessage(nil, m)
		require.NoError(t, err)
		got, err := DecodeSystemMessage(b)
		require.NoError(t, err)
		assert.Equal(t, m, got)
		_, err = DecodeSystemMessage(append(b, 0))
		assert.ErrorIs(t, err, ErrMalformed, "trailing byte in %T", m)
		if len(b) > 1 {
			_, err = DecodeSystemMessage(b[:len(b)-1])
			assert.ErrorIs(t, err, ErrMalformed, "truncated %T", m)
		}
	}
	// A dead letter's reason follows its target only when it is not 0, so
	// a node that predates reasons reads the common answer.
	plain, err := AppendSystemMessage(nil, &DeadLetterResponse{Target: b})
	require.NoError(t, err)
	for r := DeadLetterUnknownType; r <= DeadLetterMailboxFull+1; r++ {
		withReason, err := AppendSystemMessage(nil, &DeadLetterResponse{Target: b, Reason: r})
		require.NoError(t, err)
		assert.Equal(t, append(plain, byte(r)), withReason)
		got, err := DecodeSystemMessage(withReason)
		require.NoError(t, err)
		assert.Equal(t, &DeadLetterResponse{Target: b, Reason: r}, got)
		_, err = DecodeSystemMessage(append(withReason, 1))
		assert.ErrorIs(t, err, ErrMalformed)
	}
	assert.ErrorIs(t, DeadLetterUnknownType.Err(), ErrUnknownType)
	assert.ErrorIs(t, DeadLetterCodecPanic.Err(), ErrCodecPanic)
	assert.ErrorIs(t, DeadLetterMalformed.Err(), ErrMalformed)
	assert.ErrorIs(t, DeadLetterSerialize.Err(), ErrSerialize)
	assert.ErrorIs(t, DeadLetterFrameTooLarge.Err(), ErrFrameTooLarge)
	assert.ErrorIs(t, DeadLetterMailboxFull.Err(), actor.ErrMailboxFull)
	assert.NoError(t, (DeadLetterMailboxFull + 1).Err(), "a reason unknown here reads as no reason")
	assert.NoError(t, DeadLetterNoTarget.Err())

	_, err = DecodeSystemMessage([]byte{99})
	assert.ErrorIs(t, err, ErrUnknownType)
	_, err = DecodeSystemMessage(nil)
	assert.ErrorIs(t, err, ErrMalformed)
	_, err = AppendSystemMessage(nil, (*WatchRequest)(nil))
	assert.ErrorIs(t, err, ErrUnknownType)
}

func TestHelloAndRejectCodec(t *testing.T) {
	h := hello{Version: ProtocolVersion, SystemName: "s", NodeID: "id", Address: "a:1", MaxFrame: defaultMaxFrameSize}
	got, err := decodeHello(h.append(nil))
	require.NoError(t, err)
	assert.Equal(t, h, got)
	// The default frame size is not written (as a node before the field
	// wrote its hello) and reads back as the default, also when written.
	old := hello{Version: ProtocolVersion, SystemName: "s", NodeID: "id", Address: "a:1"}
	assert.Equal(t, old.append(nil), h.append(nil))
	got, err = decodeHello(appendUvarint(old.append(nil), defaultMaxFrameSize))
	require.NoError(t, err)
	assert.Equal(t, h, got)
	for _, bad := range [][]byte{{0}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}} {
		_, err = decodeHello(append(old.append(nil), bad...))
		assert.ErrorIs(t, err, ErrMalformed, "maximum frame % x", bad)
	}
	_, err = decodeHello(hello{Version: 1, SystemName: "s", Address: "a"}.appendTo())
	assert.ErrorIs(t, err, ErrMalformed, "missing node id")
	// The address is a host:port: PIDs carry it, and a peer saying
	// actor.LocalAddress ("local"), or nothing like an address, would name
	// this node's own processes in its messages (a TerminatedNotice about
	// a PID spelled "local/x" passed the check that it names the peer's).
	for _, bad := range []string{actor.LocalAddress, "a", "a:", ":1", "[::1]"} {
		_, err = decodeHello(hello{Version: 1, SystemName: "s", NodeID: "id", Address: bad}.appendTo())
		assert.ErrorIs(t, err, ErrMalformed, "address %q", bad)
	}
	for _, good := range []string{"[::1]:4000", "node-1.example:4000"} {
		_, err = decodeHello(hello{Version: 1, SystemName: "s", NodeID: "id", Address: good}.appendTo())
		assert.NoError(t, err, "address %q", good)
	}
	// The maximum frame size follows the address, when said, in range.
	h.MaxFrame = MinFrameSize
	got, err = decodeHello(h.append(nil))
	require.NoError(t, err)
	assert.Equal(t, h, got)
	for _, bad := range []uint64{MinFrameSize - 1, MaxFrameSize + 1} {
		h.MaxFrame = bad
		_, err = decodeHello(h.append(nil))
		assert.ErrorIs(t, err, ErrMalformed, "maximum frame %d", bad)
	}

	r := decodeReject(appendReject(nil, RejectCluster, strings.Repeat("x", 2*maxReasonLen)))
	assert.Equal(t, RejectCluster, r.Code)
	assert.Len(t, r.Reason, maxReasonLen)
	assert.ErrorIs(t, r, ErrClusterMismatch)
	assert.ErrorIs(t, decodeReject([]byte{0xff}), ErrMalformed)
}

func (h hello) appendTo() []byte { return h.append(nil) }

// TestEnvelopeBatchRepeats pins the batch's repeat shortcut (see
// envelopeBatch.next): an envelope that starts with the previous one's
// field bytes takes its fields as decoded then, without parsing (so
// without the decoder's string table), and reads only its payload; a
// header is decoded again for each envelope.
func TestEnvelopeBatchRepeats(t *testing.T) {
	enc := newEnvelopeEncoder("a:1", "b:1")
	var body []byte
	for i := range 3 {
		body = enc.append(body, &wireEnvelope{target: PIDRef{"b:1", "sink"}, serializer: SerializerProto, typeName: "T", payload: []byte{byte(i)}})
	}
	for i := range 2 {
		body = enc.append(body, &wireEnvelope{target: PIDRef{"b:1", "sink"}, serializer: SerializerProto, typeName: "T", payload: []byte{byte(10 + i)}, header: actor.Header{"k": "v"}})
	}
	d := newEnvelopeDecoder("b:1", "a:1")
	b, err := d.batch(body)
	require.NoError(t, err)
	var w wireEnvelope
	var ids []string
	var headers []actor.Header
	for {
		ok, err := b.next(&w)
		require.NoError(t, err)
		if !ok {
			break
		}
		ids = append(ids, w.target.ID)
		headers = append(headers, w.header)
		assert.Equal(t, "T", w.typeName)
		assert.Len(t, w.payload, 1)
		// Forget the interned strings: only a parse would make new ones.
		clear(d.strs)
		d.last = ""
	}
	require.Len(t, ids, 5)
	for i := range ids {
		assert.Equal(t, "sink", ids[i])
	}
	// The first defines the type name (no shortcut), the second parses,
	// the third repeats the second.
	assert.NotSame(t, unsafe.StringData(ids[0]), unsafe.StringData(ids[1]))
	assert.Same(t, unsafe.StringData(ids[1]), unsafe.StringData(ids[2]), "the repeat took the previous fields")
	assert.Nil(t, headers[2])
	assert.Equal(t, actor.Header{"k": "v"}, headers[3])
	assert.Equal(t, actor.Header{"k": "v"}, headers[4])
	assert.NotEqual(t, reflect.ValueOf(headers[3]).Pointer(), reflect.ValueOf(headers[4]).Pointer(), "each message its own header")
}
