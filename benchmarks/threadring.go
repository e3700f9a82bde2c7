package benchmarks

import (
	proto "github.com/asynkron/protoactor-go/actor"

	fraktor "github.com/fraktor-go/fraktor/actor"
)

// Savina Thread Ring: ringSize actors in a ring pass one token around; each
// hop decrements the token's count, and the actor that receives it at zero
// reports. One token is in flight at a time, so it is the same *token
// mutated by its holder. The result is the number of hops, which must be n.

const ringSize = 100

type (
	token    struct{ left, hops int }
	ringNext struct{ next any } // *fraktor.PID or *proto.PID
)

// threadRingFraktor runs Thread Ring on a fraktor-go system.
func threadRingFraktor(sys *fraktor.System, n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	root := sys.Root()
	res := make(chan int, 1)
	ring := make([]*fraktor.PID, ringSize)
	for i := range ring {
		var next *fraktor.PID
		ring[i] = root.Spawn(fraktor.PropsFromFunc(func(c fraktor.Context) {
			switch m := c.Message().(type) {
			case *token:
				if m.left == 0 {
					res <- m.hops
					return
				}
				m.left--
				m.hops++
				c.Send(next, m)
			case *ringNext:
				next = m.next.(*fraktor.PID)
			}
		}))
	}
	defer func() {
		for _, p := range ring {
			root.Stop(p)
		}
	}()
	for i, p := range ring {
		root.Send(p, &ringNext{ring[(i+1)%ringSize]})
	}
	root.Send(ring[0], &token{left: n})
	return awaitValue(res)
}

// threadRingProto runs Thread Ring on a protoactor-go system.
func threadRingProto(sys *proto.ActorSystem, n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	root := sys.Root
	res := make(chan int, 1)
	ring := make([]*proto.PID, ringSize)
	for i := range ring {
		var next *proto.PID
		ring[i] = root.Spawn(proto.PropsFromFunc(func(c proto.Context) {
			switch m := c.Message().(type) {
			case *token:
				if m.left == 0 {
					res <- m.hops
					return
				}
				m.left--
				m.hops++
				c.Send(next, m)
			case *ringNext:
				next = m.next.(*proto.PID)
			}
		}))
	}
	defer func() {
		for _, p := range ring {
			root.Stop(p)
		}
	}()
	for i, p := range ring {
		root.Send(p, &ringNext{ring[(i+1)%ringSize]})
	}
	root.Send(ring[0], &token{left: n})
	return awaitValue(res)
}

// threadRingChan: the classic Go ring of goroutines over unbuffered
// channels, each hop one plain receive and one plain send. Once the
// token has stopped (its holder reported and returned), nothing is sent
// any more, so the caller closes every channel and the other goroutines
// leave their receive. Receiving in a select with a quit channel instead
// would lock two channels per hop and cost about 1.7× (docs/benchmarks.md,
// "Baselines without a select per message"): a slower baseline.
func threadRingChan(n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	res := make(chan int, 1)
	chans := make([]chan *token, ringSize)
	for i := range chans {
		chans[i] = make(chan *token)
	}
	for i := range chans {
		in, out := chans[i], chans[(i+1)%ringSize]
		go func() {
			for m := range in {
				if m.left == 0 {
					res <- m.hops
					return
				}
				m.left--
				m.hops++
				out <- m
			}
		}()
	}
	chans[0] <- &token{left: n}
	hops := <-res
	for _, c := range chans {
		close(c)
	}
	return hops, nil
}
