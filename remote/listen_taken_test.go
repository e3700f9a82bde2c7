package remote_test

import (
	"errors"
	"net"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/remote"
)

// A TCP listen on a taken address fails with remote.ErrAddressInUse, as
// the in-memory transport's does, and the OS error is still reachable
// (newuser7: only syscall.EADDRINUSE matched).
func TestTCPListenTakenAddressIsErrAddressInUse(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	_, err = (&remote.TCPTransport{}).Listen(t.Context(), taken.Addr().String())
	require.ErrorIs(t, err, remote.ErrAddressInUse)
	require.True(t, errors.Is(err, syscall.EADDRINUSE), "%v", err)
}
