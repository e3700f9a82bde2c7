package benchmarks

import (
	"context"
	"fmt"
	"time"

	proto "github.com/asynkron/protoactor-go/actor"

	fraktor "github.com/fraktor-go/fraktor/actor"
)

// Request from outside: a goroutine outside the system asks an echo actor
// n times in sequence and waits for each reply (fraktor: actor.Request;
// protoactor-go: RequestFuture(...).Result(), its request API). The result
// is the number of replies that were pongs.

// requestTimeout is the per-request timeout given to both frameworks.
const requestTimeout = 10 * time.Second

// requestFraktor runs Request on a fraktor-go system.
func requestFraktor(sys *fraktor.System, n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	root := sys.Root()
	echo := root.Spawn(fraktor.PropsFromFunc(func(c fraktor.Context) {
		if _, ok := c.Message().(*ping); ok {
			c.Respond(pongMsg)
		}
	}))
	defer root.Stop(echo)
	ctx, cancel := context.WithTimeout(context.Background(), stallLimit)
	defer cancel()
	got := 0
	for range n {
		p, err := fraktor.Request[*pong](ctx, root, echo, pingMsg)
		if err != nil {
			return got, fmt.Errorf("benchmarks: fraktor request: %w", err)
		}
		if p != nil {
			got++
		}
	}
	return got, nil
}

// requestFutureFraktor is requestFraktor through RequestFuture with a
// timeout and Result, the API a caller that does not wait at once uses;
// the target row is its cost against actor.Request's.
func requestFutureFraktor(sys *fraktor.System, n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	root := sys.Root()
	echo := root.Spawn(fraktor.PropsFromFunc(func(c fraktor.Context) {
		if _, ok := c.Message().(*ping); ok {
			c.Respond(pongMsg)
		}
	}))
	defer root.Stop(echo)
	got := 0
	for range n {
		v, err := root.RequestFuture(echo, pingMsg, requestTimeout).Result()
		if err != nil {
			return got, fmt.Errorf("benchmarks: fraktor request future: %w", err)
		}
		if _, ok := v.(*pong); ok {
			got++
		}
	}
	return got, nil
}

// requestProto runs Request on a protoactor-go system.
func requestProto(sys *proto.ActorSystem, n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	root := sys.Root
	echo := root.Spawn(proto.PropsFromFunc(func(c proto.Context) {
		if _, ok := c.Message().(*ping); ok {
			c.Respond(pongMsg)
		}
	}))
	defer root.Stop(echo)
	got := 0
	for range n {
		v, err := root.RequestFuture(echo, pingMsg, requestTimeout).Result()
		if err != nil {
			return got, fmt.Errorf("benchmarks: protoactor request: %w", err)
		}
		if _, ok := v.(*pong); ok {
			got++
		}
	}
	return got, nil
}

// requestChan: the same against a goroutine serving a request channel;
// each request carries the caller's reply channel (reused, so it measures
// the two hand-offs and not an allocation).
func requestChan(n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	reqs := make(chan chan *pong)
	go func() {
		for reply := range reqs {
			reply <- pongMsg
		}
	}()
	defer close(reqs)
	reply := make(chan *pong, 1)
	got := 0
	for range n {
		reqs <- reply
		if <-reply != nil {
			got++
		}
	}
	return got, nil
}
