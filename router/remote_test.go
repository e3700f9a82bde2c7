package router_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/router"
	"github.com/fraktor-go/fraktor/testkit"
)

type (
	remoteQuery struct{}
	remoteReply struct{ From string }
)

// remoteNode starts a system with the remote extension over TCP on loopback.
func remoteNode(t *testing.T) *actor.System {
	t.Helper()
	ser := remote.NewSerializers()
	require.NoError(t, remote.RegisterJSON[*remoteQuery](ser, "routertest.Query"))
	require.NoError(t, remote.RegisterJSON[*remoteReply](ser, "routertest.Reply"))
	cfg := remote.DefaultConfig()
	cfg.ListenAddress = "127.0.0.1:0"
	cfg.Serializers = ser
	return testkit.NewPeerSystem(t, testkit.WithConfig(actor.SystemConfig{
		Name:       "router-remote",
		Extensions: []actor.ExtensionInstaller{remote.Install(cfg)},
	}))
}

func replier(name string, answer bool) *actor.Props {
	return actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*remoteQuery); ok && answer {
			c.Respond(&remoteReply{From: name})
		}
	})
}

// A router is reachable by its ID from another node, and a scatter-gather
// router's collector is answered by routees on another node.
func TestRouterAcrossNodes(t *testing.T) {
	a, b := remoteNode(t), remoteNode(t)

	// b's router, addressed from a by a PID rebuilt from address and ID.
	local := b.Root().Spawn(replier("b-worker", true))
	rr, err := router.SpawnGroup(b.Root(), router.RoundRobin(), []*actor.PID{local}, router.WithName("rr"))
	require.NoError(t, err)
	reply, err := actor.Request[*remoteReply](t.Context(), a.Root(), actor.NewPID(rr.Address, "rr"), &remoteQuery{})
	require.NoError(t, err)
	assert.Equal(t, "b-worker", reply.From)

	// a scatter-gather router on b over routees on a: the answer crosses
	// the wire to the collector registered on b.
	silent := a.Root().Spawn(replier("silent", false))
	talker := a.Root().Spawn(replier("talker", true))
	sg, err := router.SpawnGroup(b.Root(), router.ScatterGatherFirstCompleted(10*time.Second), []*actor.PID{silent, talker})
	require.NoError(t, err)
	reply, err = actor.Request[*remoteReply](t.Context(), b.Root(), sg, &remoteQuery{})
	require.NoError(t, err)
	assert.Equal(t, "talker", reply.From)
}

// A scatter-gather router whose routees on another node cannot take the
// request (here: routers there with no routees, which refuse it as a dead
// letter) fails at once with ErrAllRouteesFailed: each refusal comes back
// as a DeadLetterResponse to the collector.
func TestScatterGatherRemoteRouteesRefuse(t *testing.T) {
	a, b := remoteNode(t), remoteNode(t)
	e1, err := router.SpawnGroup(a.Root(), router.RoundRobin(), nil)
	require.NoError(t, err)
	e2, err := router.SpawnGroup(a.Root(), router.RoundRobin(), nil)
	require.NoError(t, err)
	sg, err := router.SpawnGroup(b.Root(), router.ScatterGatherFirstCompleted(time.Minute), []*actor.PID{e1, e2})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err = actor.Request[*remoteReply](ctx, b.Root(), sg, &remoteQuery{})
	assert.ErrorIs(t, err, router.ErrAllRouteesFailed)
}
