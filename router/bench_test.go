package router_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/router"
)

type benchMsg struct{}

// BenchmarkTell: a tell from outside any actor, straight to the actor and
// through a round-robin router (over 1 routee: the cost of routing alone;
// over 4: spread over several mailboxes), in the same run.
func BenchmarkTell(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		benchTell(b, func(sys *actor.System, p *actor.Props) *actor.PID { return sys.Root().Spawn(p) })
	})
	for _, n := range []int{1, 4} {
		name := map[int]string{1: "roundrobin-1", 4: "roundrobin-4"}[n]
		b.Run(name, func(b *testing.B) {
			benchTell(b, func(sys *actor.System, p *actor.Props) *actor.PID {
				r, err := router.SpawnPool(sys.Root(), p, n, router.RoundRobin())
				if err != nil {
					b.Fatal(err)
				}
				// Wait for the routees, so that the loop measures routing
				// rather than messages held while the pool starts.
				if _, err := actor.Request[*router.Routees](context.Background(), sys.Root(), r, &router.GetRoutees{}); err != nil {
					b.Fatal(err)
				}
				return r
			})
		})
	}
}

func benchTell(b *testing.B, target func(*actor.System, *actor.Props) *actor.PID) {
	sys, err := actor.NewSystem(actor.SystemConfig{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = sys.Shutdown(context.Background()) }()
	var n atomic.Int64
	want := int64(b.N)
	done := make(chan struct{})
	pid := target(sys, actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*benchMsg); ok && n.Add(1) == want {
			close(done)
		}
	}))
	msg := &benchMsg{}
	root := sys.Root()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		root.Send(pid, msg)
	}
	<-done
}
