//go:build unix

package testnet

import (
	"net"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A dial to ClosedAddress's address is refused, and no listener can take
// its port while the test runs.
func TestClosedAddressStaysClosed(t *testing.T) {
	addr := ClosedAddress(t)
	_, err := net.Dial("tcp", addr)
	require.ErrorIs(t, err, syscall.ECONNREFUSED)
	_, err = net.Listen("tcp", addr)
	require.ErrorIs(t, err, syscall.EADDRINUSE)
}
