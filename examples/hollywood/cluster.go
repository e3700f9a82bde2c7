package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// Messages to the player grain. They cross members, so both are registered
// on every member (JSON here).
type (
	Score struct{ Points int }
	Total struct {
		Player string
		Points int
		Member string
	}
)

// newPlayer is the kind's producer, as in Hollywood's
// c.RegisterKind("player", newPlayer, cluster.NewKindConfig()). There is no
// Activate: the first message to an identity activates it on its owner.
func newPlayer() actor.Actor {
	points := 0
	return actor.ReceiveFunc(func(c actor.Context) {
		if m, ok := c.Message().(*Score); ok {
			points += m.Points
			id, _ := cluster.IdentityOf(c)
			c.Respond(&Total{Player: id.ID, Points: points, Member: c.Self().Address})
		}
	})
}

// clusterMember starts one member: remote on loopback TCP, the cluster with
// the player kind, membership from the shared in-memory registry (the Consul
// provider in production: cluster/consul).
func clusterMember(reg cluster.Provider) (*actor.System, *cluster.Cluster, error) {
	ser := remote.NewSerializers()
	if err := remote.RegisterJSON[*Score](ser, "hollywood.Score"); err != nil {
		return nil, nil, err
	}
	if err := remote.RegisterJSON[*Total](ser, "hollywood.Total"); err != nil {
		return nil, nil, err
	}
	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress = "127.0.0.1:0"
	rcfg.SystemName = "hollywood-cluster"
	rcfg.Serializers = ser
	sys, err := actor.NewSystem(actor.SystemConfig{Name: "hollywood-cluster", Extensions: []actor.ExtensionInstaller{
		remote.Install(rcfg),
		cluster.Install(cluster.Config{Provider: reg,
			Kinds: []cluster.Kind{cluster.NewKind("player", actor.PropsFromProducer(newPlayer))}}),
	}})
	if err != nil {
		return nil, nil, err
	}
	return sys, cluster.Get(sys), nil
}

// runCluster ports Hollywood's cluster example: three members, players
// activated by identity, one activation per player whichever member calls,
// and a member leaving: its players come back on the others.
func runCluster() error {
	reg, err := cluster.NewMemoryRegistry(cluster.DefaultMemoryConfig())
	if err != nil {
		return err
	}
	defer reg.Close()
	var (
		systems  []*actor.System
		members  []*cluster.Cluster
		shutdown = map[*actor.System]bool{}
	)
	defer func() {
		for _, s := range systems {
			if !shutdown[s] {
				_ = s.Shutdown(context.Background())
			}
		}
	}()
	for i := 0; i < 3; i++ {
		sys, c, err := clusterMember(reg)
		if err != nil {
			return err
		}
		systems, members = append(systems, sys), append(members, c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range members {
		if err := c.WaitForMembers(ctx, 3); err != nil {
			return err
		}
	}
	fmt.Println("1. three members up")

	// Hollywood's ActivationEvent: here cluster.ActivationStarted on each
	// member's own EventStream.
	activated := make(chan string, 64)
	for _, s := range systems {
		sub := actor.Subscribe(s.EventStream(), func(e *cluster.ActivationStarted) { activated <- e.Identity.ID })
		defer s.EventStream().Unsubscribe(sub)
	}

	fmt.Println("2. each player scored from every member: one activation each")
	players := []string{"alice", "bob", "carol", "dave", "erin", "frank"}
	where := map[string]string{}
	for _, p := range players {
		for i, c := range members {
			t, err := cluster.Request[*Total](ctx, c, cluster.NewIdentity("player", p), &Score{Points: 1})
			if err != nil {
				return fmt.Errorf("%s from member %d: %w", p, i+1, err)
			}
			if h, ok := where[p]; ok && h != t.Member {
				return fmt.Errorf("%s answered from %s and %s", p, h, t.Member)
			}
			where[p] = t.Member
		}
		fmt.Printf("  %s: %d points\n", p, 3)
	}
	for range players {
		<-activated
	}
	total := 0
	for _, c := range members {
		total += c.ActiveCount()
	}
	fmt.Printf("  activations: %d\n", total)

	fmt.Println("3. the member hosting alice leaves; alice is activated again elsewhere")
	gone := -1
	for i, s := range systems {
		if s.Address() == where["alice"] {
			gone = i
		}
	}
	if gone < 0 {
		return errors.New("alice's member not found")
	}
	if err := systems[gone].Shutdown(ctx); err != nil { // leaves gracefully: hands its grains over
		return err
	}
	shutdown[systems[gone]] = true
	caller := members[(gone+1)%3]
	t, err := cluster.Request[*Total](ctx, caller, cluster.NewIdentity("player", "alice"), &Score{Points: 10})
	if err != nil {
		return err
	}
	fmt.Printf("  alice moved: %v; points %d (state kept only in the activation: it starts over)\n",
		t.Member != where["alice"], t.Points)
	return nil
}
