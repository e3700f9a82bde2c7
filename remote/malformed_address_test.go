package remote_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// A PID whose address cannot be dialled at all (no port, no host, an empty
// port) fails a request at once with ErrInvalidAddress, which names the
// address. Before, the node dialled it again and again with backoff,
// logging "dial failed ... missing port in address" at Debug only, until
// GiveUpAfter; the caller waited for its deadline and saw "actor:
// timeout", never why. An empty port ("127.0.0.1:") passed the check until
// it asked for a port as well: no node has such an address (peers refuse
// it in a hello), and port 0 refuses every dial.
func TestRequestToMalformedAddressFailsAtOnce(t *testing.T) {
	cfg := testConfig(t)
	cfg.GiveUpAfter = time.Minute
	sysA, _ := startSystem(t, "a", cfg)
	for _, addr := range []string{"nohost", "10.0.0.1", ":8080", "[::1", "127.0.0.1:"} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := actor.Request[*EchoReply](ctx, sysA.Root(), actor.NewPID(addr, "x"), &Echo{})
		cancel()
		require.Error(t, err)
		require.NotErrorIs(t, err, actor.ErrTimeout, "%q: the request waited for its deadline", addr)
		require.ErrorIs(t, err, remote.ErrInvalidAddress, "%q", addr)
		require.True(t, strings.Contains(err.Error(), addr), "%q: the error does not name the address: %v", addr, err)
	}
}
