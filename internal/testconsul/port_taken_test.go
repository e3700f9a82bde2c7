package testconsul

import (
	"fmt"
	"net"
	"testing"

	"github.com/hashicorp/consul/api"
	"github.com/stretchr/testify/require"
)

// A port chosen free can be taken by another process before the agent
// binds it (a test running in parallel): the agent exits at once, and
// Start picks new ports and starts it again instead of failing the test.
// Here the first choice's HTTP port is taken on purpose; before, the test
// failed with "agent exited before it was ready ... address already in use".
func TestStartRetriesWhenAPortIsTaken(t *testing.T) {
	var held net.Listener
	tries := 0
	portsChosen = func(ports []int) {
		tries++
		if tries == 1 {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", ports[0]))
			require.NoError(t, err)
			held = l
		}
	}
	t.Cleanup(func() {
		portsChosen = nil
		if held != nil {
			_ = held.Close()
		}
	})
	a := Start(t)
	require.Equal(t, 2, tries, "started again on new ports")
	cfg := a.APIConfig()
	client, err := api.NewClient(&cfg)
	require.NoError(t, err)
	leader, err := client.Status().Leader()
	require.NoError(t, err)
	require.NotEmpty(t, leader)
}
