package benchmarks

import (
	proto "github.com/asynkron/protoactor-go/actor"

	fraktor "github.com/fraktor-go/fraktor/actor"
)

// Savina Counting: a producer actor sends n increment messages to a
// counter actor, then a retrieve message; the counter answers the
// producer with its total. The result is that total, which must be n.

type (
	increment struct{}
	retrieve  struct{}
	total     struct{ n int }
)

var (
	incrementMsg = &increment{}
	retrieveMsg  = &retrieve{}
)

// countingFraktor runs Counting on a fraktor-go system.
func countingFraktor(sys *fraktor.System, n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	root := sys.Root()
	count := 0
	counter := root.Spawn(fraktor.PropsFromFunc(func(c fraktor.Context) {
		switch c.Message().(type) {
		case *increment:
			count++
		case *retrieve:
			c.Respond(&total{count})
		}
	}))
	defer root.Stop(counter)
	res := make(chan int, 1)
	producer := root.Spawn(fraktor.PropsFromFunc(func(c fraktor.Context) {
		switch m := c.Message().(type) {
		case *start:
			for range n {
				c.Send(counter, incrementMsg)
			}
			c.Request(counter, retrieveMsg)
		case *total:
			res <- m.n
		}
	}))
	defer root.Stop(producer)
	root.Send(producer, startMsg)
	return awaitValue(res)
}

// countingProto runs Counting on a protoactor-go system.
func countingProto(sys *proto.ActorSystem, n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	root := sys.Root
	count := 0
	counter := root.Spawn(proto.PropsFromFunc(func(c proto.Context) {
		switch c.Message().(type) {
		case *increment:
			count++
		case *retrieve:
			c.Respond(&total{count})
		}
	}))
	defer root.Stop(counter)
	res := make(chan int, 1)
	producer := root.Spawn(proto.PropsFromFunc(func(c proto.Context) {
		switch m := c.Message().(type) {
		case *start:
			for range n {
				c.Send(counter, incrementMsg)
			}
			c.Request(counter, retrieveMsg)
		case *total:
			res <- m.n
		}
	}))
	defer root.Stop(producer)
	root.Send(producer, startMsg)
	return awaitValue(res)
}

// countingChan: the same with a counter goroutine reading a buffered
// channel (1024) of increments and retrieves.
func countingChan(n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	in := make(chan any, 1024)
	res := make(chan int, 1)
	go func() {
		count := 0
		for m := range in {
			switch m.(type) {
			case *increment:
				count++
			case *retrieve:
				res <- count
				return
			}
		}
	}()
	for range n {
		in <- incrementMsg
	}
	in <- retrieveMsg
	return <-res, nil
}
