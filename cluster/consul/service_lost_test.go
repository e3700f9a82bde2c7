package consul

import (
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/internal/testconsul"
)

// A live member whose service registration the agent no longer has (an
// agent restarted without its data directory, an operator's deregister)
// registers it again at its next renewal: discovery shows a member while it
// lives. Before, every check update failed with 404 "Unknown check ID",
// logged at Debug, and the member stayed out of discovery for good.
func TestConsulLostServiceRegisteredAgain(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	client := apiClient(t, agent)
	a := joinMember(t, newProvider(t, cfg), testMember("a", 1))
	waitView(t, a, "a", hasMembers("a#1"))
	serviceID := a.(*membership).serviceID
	svcs, err := client.Agent().Services()
	require.NoError(t, err)
	require.Contains(t, svcs, serviceID)

	require.NoError(t, client.Agent().ServiceDeregister(serviceID))
	svcs, err = client.Agent().Services()
	require.NoError(t, err)
	require.NotContains(t, svcs, serviceID)
	// The agent has no event for a registration: poll its local state on
	// a ticker, bounded.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	timeout := time.NewTimer(waitLimit)
	defer timeout.Stop()
	for {
		status, _, err := client.Agent().AgentHealthServiceByID(serviceID)
		require.NoError(t, err)
		if status == api.HealthPassing {
			return
		}
		select {
		case <-tick.C:
		case <-timeout.C:
			t.Fatalf("service %s not registered again within %v (status %q)", serviceID, waitLimit, status)
		}
	}
}
