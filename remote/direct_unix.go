//go:build unix

package remote

import (
	"net"
	"syscall"
)

// nowWriter writes to a TCP or Unix socket without waiting: one write(2)
// of what fits in the socket's send buffer now. A direct write uses it so
// that a sender never waits for a peer that stopped reading, and sets no
// deadline to bound such a wait: a short deadline per write arms a runtime
// timer due soon, which costs a fifth or more of a remote round trip
// (docs/benchmarks.md, "Direct writes and a peer that stops reading").
// Guarded by the connWriter's mu.
type nowWriter struct {
	rc  syscall.RawConn
	fn  func(fd uintptr) bool // made once: a closure per write would allocate
	b   []byte
	n   int
	err error
}

// newNowWriter returns a nowWriter for raw, or nil when raw is not a
// socket of the operating system (a *tls.Conn, a net.Pipe).
func newNowWriter(raw net.Conn) *nowWriter {
	sc, ok := raw.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	w := &nowWriter{rc: rc}
	w.fn = func(fd uintptr) bool {
		for {
			n, err := syscall.Write(int(fd), w.b)
			switch err {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN: // the send buffer is full
				n, err = 0, nil
			}
			w.n, w.err = max(n, 0), err
			return true // never wait for room
		}
	}
	return w
}

// write writes what fits of b now and returns how much. An error with
// nothing written may be os.ErrDeadlineExceeded: the deadline of the
// writer goroutine's last write has passed (RawConn.Write checks it
// first).
func (w *nowWriter) write(b []byte) (int, error) {
	w.b = b
	err := w.rc.Write(w.fn)
	w.b = nil
	if err != nil {
		return 0, err
	}
	return w.n, w.err
}
