//go:build !unix

package testnet

import (
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

// ClosedAddress returns a loopback address where nothing listens (a
// listener's port, freed; another listener may be given it again).
func ClosedAddress(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}
