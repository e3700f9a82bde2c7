package consul

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/internal/testconsul"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

func founded(t *testing.T, m cluster.Membership) bool {
	t.Helper()
	f, ok := m.(interface{ Founded() (time.Time, bool) })
	require.True(t, ok, "a Consul membership reports whether it founded its cluster")
	_, yes := f.Founded()
	return yes
}

// The first Join of a new cluster founds it; every later Join, of
// another ID or another incarnation, does not, and neither does the first
// Join where a cluster ran before the founded record existed (its
// incarnation records are there).
func TestConsulFoundedOnce(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	p := newProvider(t, cfg)
	a := joinMember(t, p, testMember("a", 1))
	b := joinMember(t, p, testMember("b", 2))
	require.True(t, founded(t, a))
	require.False(t, founded(t, b))
	require.NoError(t, a.Stop(context.Background()))
	require.False(t, founded(t, joinMember(t, p, testMember("a", 3))), "a restart is no founding")

	old := cfg
	old.Cluster += "-old"
	ks := newKeyspace(old.KeyPrefix, old.Cluster)
	_, err := apiClient(t, agent).KV().Put(&api.KVPair{Key: ks.incarnation("x"), Value: []byte("1")}, nil)
	require.NoError(t, err)
	require.False(t, founded(t, joinMember(t, newProvider(t, old), testMember("y", 1))),
		"an incarnation record says a cluster ran here")
}

// With Consul, no view is ever numbered 1 (epochs are the KV index), so
// before the founded record every member of a new cluster waited out W
// before its first activation (10.5 s to the first answers with the
// default timing, three processes started 0.5 s apart). Now the founder
// activates at once and vouches for the members that join after it: with
// W = 60 s, every member answers well within it.
func TestConsulFreshClusterActivatesWithoutWaitOut(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	cfg.Cluster = "consul-founded" // the cluster's Name (ClusterNamer)
	p := newProvider(t, cfg)
	kind := cluster.NewKind("where", actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*whereMsg); ok {
			c.Respond(&hereMsg{Address: c.Self().Address})
		}
	}))
	const waitOut = time.Minute
	start := func() *cluster.Cluster {
		ser := remote.NewSerializers()
		require.NoError(t, remote.RegisterJSON[*whereMsg](ser, "test.Where"))
		require.NoError(t, remote.RegisterJSON[*hereMsg](ser, "test.Here"))
		rcfg := remote.DefaultConfig()
		rcfg.ListenAddress, rcfg.SystemName, rcfg.Serializers = "127.0.0.1:0", "consul-founded", ser
		sys := testkit.NewPeerSystem(t, func(c *actor.SystemConfig) {
			c.Name = "consul-founded"
			c.Extensions = []actor.ExtensionInstaller{remote.Install(rcfg), cluster.Install(cluster.Config{
				Name: "consul-founded", Provider: p, Kinds: []cluster.Kind{kind},
				StopBudget: 100 * time.Millisecond, MaxPause: 100 * time.Millisecond,
				TickInterval: 20 * time.Millisecond, WaitOut: waitOut,
			})}
		})
		return cluster.Get(sys)
	}
	members := []*cluster.Cluster{start(), start(), start()}
	ctx, cancel := context.WithTimeout(context.Background(), waitOut/3)
	defer cancel()
	for _, c := range members {
		require.NoError(t, c.WaitForMembers(ctx, len(members)))
	}
	answered := map[string]bool{}
	for i := 0; len(answered) < len(members); i++ {
		require.Less(t, i, 1000, "no identity of some member in 1,000")
		here, err := cluster.Request[*hereMsg](ctx, members[i%len(members)], cluster.NewIdentity("where", fmt.Sprint(i)), &whereMsg{})
		require.NoError(t, err, "answered by %v so far", answered)
		answered[here.Address] = true
	}
}
