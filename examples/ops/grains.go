package main

import (
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// The grains' messages cross members, so they are registered with remote
// (JSON here).
type (
	// Add adds N to a counter; N = 0 reads it.
	Add struct{ N int64 }
	// Touch records a hit on a session.
	Touch struct{ Page string }
	// Value is a counter's or a session's answer: its value and the member
	// that hosts the activation.
	Value struct {
		N      int64
		Member string
	}
)

const (
	kindCounter = "counter"
	kindSession = "session"
)

func registerMessages(ser *remote.Serializers) error {
	if err := remote.RegisterJSON[*Add](ser, "ops.Add"); err != nil {
		return err
	}
	if err := remote.RegisterJSON[*Touch](ser, "ops.Touch"); err != nil {
		return err
	}
	return remote.RegisterJSON[*Value](ser, "ops.Value")
}

// counter keeps its value in memory: it starts at zero on every activation
// (after a move, a passivation, a crash of its member).
func counter(member string) actor.Actor {
	var n int64
	return actor.ReceiveFunc(func(c actor.Context) {
		if m, ok := c.Message().(*Add); ok {
			n += m.N
			c.Respond(&Value{N: n, Member: member})
		}
	})
}

// session counts hits per page and passivates after its idle timeout.
func session(member string) actor.Actor {
	hits := map[string]int64{}
	var total int64
	return actor.ReceiveFunc(func(c actor.Context) {
		if m, ok := c.Message().(*Touch); ok {
			hits[m.Page]++
			total++
			c.Respond(&Value{N: total, Member: member})
		}
	})
}

func kinds(member string, sessionIdle time.Duration) []cluster.Kind {
	return []cluster.Kind{
		cluster.NewKind(kindCounter, actor.PropsFromProducer(func() actor.Actor { return counter(member) },
			actor.WithKind(kindCounter))),
		cluster.NewKind(kindSession, actor.PropsFromProducer(func() actor.Actor { return session(member) },
			actor.WithKind(kindSession)), cluster.WithIdleTimeout(sessionIdle)),
	}
}
