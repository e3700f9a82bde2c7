package remote

import (
	"crypto/tls"
	"net"
	"time"
)

// closeNotifyWait bounds how long closing a TLS connection waits to write
// its close_notify alert: long enough for a peer that reads, however
// slowly, to take the alert's few bytes, short next to crypto/tls's own
// bound of 5 s.
const closeNotifyWait = 100 * time.Millisecond

// closeStream closes raw, a stream the Node opened or accepted, without
// waiting for a peer that stopped reading. Every close of such a stream
// goes through it.
//
// Why: crypto/tls's Conn.Close first writes a close_notify alert under a
// write deadline of 5 s that it sets itself (a deadline set before Close is
// replaced), so with the send buffer full, a peer that stopped reading
// holds the closing goroutine that long: an endpoint's, after its writer's
// write timed out, or Node.Close's, which closes under the Node's lock. A
// second Close of a tls.Conn returns at once and closes nothing, so a
// forced close could not end that wait either.
//
// So with abort (a write failed, which may leave half a TLS record on the
// wire, or the Node is shutting every socket as if it died) the socket
// under the TLS layer is closed at once, without an alert. Otherwise the
// alert is sent, and if it is not written within closeNotifyWait the
// socket is closed under it, which ends the write. Closing that socket
// also ends a close_notify that another goroutine is waiting on. The peer
// reads the end of the stream at a record boundary as io.EOF either way,
// and the protocol's own goodbye says whether the end was orderly.
// TestCloseStream and TestTLSCloseBoundedOnStalledPeer pin it.
func closeStream(raw net.Conn, abort bool) {
	tc, ok := raw.(*tls.Conn)
	if !ok {
		_ = raw.Close()
		return
	}
	if abort {
		_ = tc.NetConn().Close()
		return
	}
	t := time.AfterFunc(closeNotifyWait, func() { _ = tc.NetConn().Close() })
	_ = tc.Close()
	t.Stop()
}
