package cluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
)

// An activation refusal reaches the caller with its sentinel's text once:
// the owner puts the refusal's whole text (sentinel included) into
// ActivationResponse.Error, and the caller, which wraps the sentinel
// again, drops that prefix (ownerRefusal).
func TestActivationRefusalTextNotDoubled(t *testing.T) {
	reg := fastRegistry(t)
	first := startMemberWith(t, reg, fastTiming, counterKind())
	awaitMembers(t, 1, first)
	require.NoError(t, first.sys.Shutdown(context.Background()))
	// A member that joins after another left waits out W before it grants
	// anything: a request with a shorter deadline ends with the refusal.
	late := startMemberWith(t, reg, fastTiming, counterKind())
	awaitMembers(t, 1, late)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := cluster.Request[*Total](ctx, late.c, cluster.NewIdentity("counter", "a"), &Get{})
	require.ErrorIs(t, err, cluster.ErrTimeout)
	require.Equal(t, 1, strings.Count(err.Error(), "cluster: activation busy"), "%v", err)
}
