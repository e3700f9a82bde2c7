package remote

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// readByOlderNode is how a node from before the hello's MaxFrame field
// read a hello or welcome: the three strings after the version, then
// nothing (trailing bytes were ErrMalformed, reject code 1).
func readByOlderNode(body []byte) error {
	c := cursor{b: body}
	c.uvarint()
	c.str("system name", maxSystemNameLen)
	c.str("node id", maxNodeIDLen)
	c.str("address", maxAddressLen)
	return c.finish("hello")
}

// A node at the default MaxFrameSize says its hello and welcome as a node
// that predates the field did, so nodes of both kinds connect during a
// rolling upgrade. Before, every hello and welcome carried the field, and
// an older node refused each handshake with a newer one, both ways
// ("4 trailing bytes after hello"): no connection at all.
func TestHelloAtDefaultFrameSizeReadByOlderNodes(t *testing.T) {
	t.Run("welcome", func(t *testing.T) {
		b, rb := startNode(t, testConfig())
		r := dialRaw(t, b.Address())
		r.write(appendFrame(nil, kindHello, (&hello{Version: ProtocolVersion, SystemName: "fraktor", NodeID: "older", Address: r.local()}).append(nil)))
		kind, body, err := r.fr.next()
		require.NoError(t, err)
		require.Equal(t, kindWelcome, kind)
		require.NoError(t, readByOlderNode(body), "the welcome, as an older dialer reads it")
		r.write(appendFrame(nil, kindAck, nil))
		rb.waitUntil(t, "the older node connected", func(r *recorder) bool {
			for _, e := range r.events {
				if e.Kind == EventConnected {
					return true
				}
			}
			return false
		})
	})
	t.Run("hello", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		t.Cleanup(func() { _ = ln.Close() })
		a, _ := startNode(t, testConfig())
		addr := ln.Addr().String()
		require.NoError(t, a.Send(addr, Envelope{Target: PIDRef{Address: addr, ID: "x"}, Message: ping(1)}))
		c, err := ln.Accept()
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		require.NoError(t, c.SetDeadline(time.Now().Add(waitTimeout)))
		kind, body, err := newHandshakeReader(c).next()
		require.NoError(t, err)
		require.Equal(t, kindHello, kind)
		require.NoError(t, readByOlderNode(body), "the hello, as an older acceptor reads it")
	})
}

// A hello without MaxFrame is of a node at the default MaxFrameSize (or of
// one that predates the field, whose size is unknown): a node with a
// larger limit sends it no frame above the default. Pinned because the
// default is not said on the wire (above): read as "not said, use our
// own", the 16 MiB node would send the 5 MiB envelope and the peer's
// reader would close the connection.
func TestPeerHelloWithoutFrameSizeMeansDefault(t *testing.T) {
	ser := NewSerializers()
	require.NoError(t, ser.RegisterProto(&wrapperspb.BytesValue{}))
	cfgA := testConfig()
	cfgA.Serializers = ser
	cfgA.MaxFrameSize = 16 << 20
	cfgA.OutboundQueueBytes = 32 << 20
	cfgB := testConfig()
	cfgB.Serializers = ser
	require.Equal(t, defaultMaxFrameSize, cfgB.MaxFrameSize)
	a, ra := startNode(t, cfgA)
	b, rb := startNode(t, cfgB)
	target := PIDRef{Address: b.Address(), ID: "x"}
	require.NoError(t, a.Send(b.Address(), Envelope{Target: target, Message: ping(1)}))
	rb.waitUntil(t, "the first envelope", func(r *recorder) bool { return len(r.delivered) == 1 })

	_ = a.Send(b.Address(), Envelope{Target: target, Message: wrapperspb.Bytes(make([]byte, 5<<20))})
	refusedThenNext(t, a, b, ra, rb, target, func(m any) bool { _, big := m.(*wrapperspb.BytesValue); return big })
}
