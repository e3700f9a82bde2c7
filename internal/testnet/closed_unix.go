//go:build unix

package testnet

import (
	"net"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// ClosedAddress returns a loopback address where nothing listens and,
// until the test ends, nothing can: its port is held by a socket that is
// bound but not listening (and without SO_REUSEADDR), so a dial is refused
// and no listener can take the port. A listener closed to free its port
// would not do: another node or agent, of this test binary or of a package
// tested in parallel, can be given the port again at once, and a test that
// dials the "closed" address then meets a live server.
func ClosedAddress(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Close(fd) })
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	sa, err := syscall.Getsockname(fd)
	require.NoError(t, err)
	in4, ok := sa.(*syscall.SockaddrInet4)
	require.True(t, ok)
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(in4.Port))
}
