package cluster_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
)

// warmPair starts two members on loopback TCP hosting the counter kind and
// the generated Account kind, and returns them with, for each of the two
// kinds, an identity member 0 owns and one member 1 owns, all activated
// from member 0 (their PIDs cached there).
func warmPair(tb testing.TB) (from node, local, remote [2]cluster.Identity) {
	tb.Helper()
	reg := newRegistry(tb)
	account := shopv1.AccountKind(func(id cluster.Identity) shopv1.AccountGrain {
		return &testAccount{id: id, activations: new(atomic.Int32)}
	})
	m0 := startMember(tb, reg, counterKind(), account)
	m1 := startMember(tb, reg, counterKind(), account)
	awaitMembers(tb, 2, m0, m1)
	topo, ok := m0.c.Topology()
	if !ok {
		tb.Fatal("no view")
	}
	ring := cluster.NewRendezvous(cluster.DefaultHashConfig()).Build(topo)
	var found [2][2]bool
	for i := 0; !(found[0][0] && found[0][1] && found[1][0] && found[1][1]); i++ {
		if i == 10000 {
			tb.Fatal("no identity found on each member")
		}
		for k, kind := range []string{"counter", shopv1.AccountKindName} {
			id := cluster.NewIdentity(kind, fmt.Sprint("w", i))
			owner, err := ring.Owner(id)
			if err != nil {
				tb.Fatal(err)
			}
			on := 1
			if owner.Address == m0.sys.Address() {
				on = 0
			}
			if found[on][k] {
				continue
			}
			found[on][k] = true
			if on == 0 {
				local[k] = id
			} else {
				remote[k] = id
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for _, id := range []cluster.Identity{local[0], remote[0]} {
		who, err := cluster.Request[*Identity](ctx, m0.c, id, &WhoAmI{})
		if err != nil {
			tb.Fatal(err)
		}
		want := m0.sys.Address()
		if id == remote[0] {
			want = m1.sys.Address()
		}
		if who.Member != want {
			tb.Fatalf("%s runs on %s, want %s", id, who.Member, want)
		}
	}
	for _, id := range []cluster.Identity{local[1], remote[1]} {
		if _, err := shopv1.NewAccountClient(m0.c, id.ID).GetBalance(ctx, &emptypb.Empty{}); err != nil {
			tb.Fatal(err)
		}
	}
	return m0, local, remote
}

// BenchmarkWarmCall: one caller on member 0 calls a warm grain (its PID
// known on member 0) on member 0 (owner=local) or on member 1 over loopback
// TCP (owner=remote), through each of the four request APIs, and waits for
// the reply before the next call. ns/op is the round trip; allocations are
// the whole process's (caller, both members' remote, the grain).
//
//	go test -run '^$' -bench WarmCall -benchmem -cpu 2 ./cluster/
func BenchmarkWarmCall(b *testing.B) {
	m0, local, remote := warmPair(b)
	ctx := context.Background()
	// The floor: a plain actor request on member 0 to an actor that
	// answers like the counter grain.
	plain := m0.sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*Get); ok {
			c.Respond(&Total{})
		}
	}))
	b.Run("owner=local/api=actor.Request", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := actor.Request[*Total](ctx, m0.sys.Root(), plain, &Get{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, owner := range []struct {
		name string
		ids  [2]cluster.Identity
	}{{"local", local}, {"remote", remote}} {
		counter, account := owner.ids[0], owner.ids[1]
		client := shopv1.NewAccountClient(m0.c, account.ID)
		apis := []struct {
			name string
			call func() error
		}{
			{"RequestFuture", func() error {
				_, err := m0.c.RequestFuture(counter, &Get{}, time.Second).Result()
				return err
			}},
			{"Request", func() error {
				_, err := cluster.Request[*Total](ctx, m0.c, counter, &Get{})
				return err
			}},
			{"CallFuture", func() error {
				_, err := client.GetBalanceFuture(&emptypb.Empty{}, time.Second).Result()
				return err
			}},
			{"Call", func() error {
				_, err := client.GetBalance(ctx, &emptypb.Empty{})
				return err
			}},
		}
		for _, api := range apis {
			b.Run(fmt.Sprintf("owner=%s/api=%s", owner.name, api.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := api.call(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
