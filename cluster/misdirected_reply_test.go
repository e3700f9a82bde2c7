package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster/internal/clusterpb"
)

// Found by the chaos test (seed 2, under load): a member restarted at the
// same address numbers its futures from the start again, so a late
// activation answer to its earlier incarnation can land on a new request's
// future. That answer names another identity's grain; taken as it was, a
// request for one identity was applied to another and acknowledged. The
// owner echoes the identity, and the requester refuses an answer for
// another one (and asks again: errMisdirectedReply is not fatal).
func TestActivationReplyForAnotherIdentityRefused(t *testing.T) {
	sys, err := actor.NewSystem(actor.SystemConfig{Name: "misdirected"})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, sys.Shutdown(ctx))
	})
	reg, err := NewMemoryRegistry(DefaultMemoryConfig())
	require.NoError(t, err)
	t.Cleanup(reg.Close)
	self := Member{ID: "a", Incarnation: 1, Address: sys.Address(), Kinds: []string{"account"}}
	m, err := reg.Join(context.Background(), self)
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Stop(context.Background()) })

	// The owner's placement actor answers every request for account/1
	// with account/2's grain, as a late answer to an earlier incarnation
	// would.
	_, err = sys.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if req, ok := c.Message().(*clusterpb.ActivationRequest); ok {
			c.Respond(&clusterpb.ActivationResponse{Status: clusterpb.ActivationStatus_ACTIVATION_STATUS_OK,
				PidAddress: sys.Address(), PidId: "grain-of-account-2", Kind: req.Kind, Id: "2"})
		}
	}), placementName)
	require.NoError(t, err)

	c := &Cluster{root: sys.Root(), cfg: Config{ActivationTimeout: 5 * time.Second}}
	c.membership.Store(&membershipBox{m: m})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pid, _, err := c.askOwner(ctx, NewIdentity("account", "1"), self, 1, 1)
	require.ErrorIs(t, err, errMisdirectedReply)
	require.Nil(t, pid)
	require.False(t, isFatal(err), "asked again")
}
