//go:build !unix

package remote

import "net"

// nowWriter is not available here: direct writes wait up to directWait
// under a deadline (see tryDirect).
type nowWriter struct{}

func newNowWriter(net.Conn) *nowWriter { return nil }

func (*nowWriter) write([]byte) (int, error) { return 0, nil }
