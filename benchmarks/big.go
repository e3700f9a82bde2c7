package benchmarks

import (
	"sync/atomic"

	proto "github.com/asynkron/protoactor-go/actor"

	fraktor "github.com/fraktor-go/fraktor/actor"
)

// Savina Big: bigActors actors each ping a random other actor, wait for its
// pong, and repeat until they have made their share of n pings; every actor
// keeps answering pings meanwhile. An actor that is done tells a sink
// actor, which reports when all are done. The result is the total number
// of pongs received, which must be n.

const bigActors = 120

type (
	bigPing struct{ from int }
	bigPong struct{}
	bigDone struct{ pongs int }
)

var bigPongMsg = &bigPong{}

// bigState is one Big actor's protocol, shared by every implementation.
type bigState struct {
	self, left, pongs int
	rng               uint64
	ping              *bigPing // this actor's ping, shared: it carries only self
}

func newBigState(self, quota int) *bigState {
	return &bigState{self: self, left: quota, rng: uint64(self)*0x9E3779B97F4A7C15 + 1, ping: &bigPing{self}}
}

// peer picks a random actor other than self (xorshift64).
func (s *bigState) peer() int {
	s.rng ^= s.rng << 13
	s.rng ^= s.rng >> 7
	s.rng ^= s.rng << 17
	p := int(s.rng % (bigActors - 1))
	if p >= s.self {
		p++
	}
	return p
}

// next is called on start and on each pong: it returns the peer to ping
// next, or -1 when this actor has made all its pings.
func (s *bigState) next() int {
	if s.left == 0 {
		return -1
	}
	s.left--
	return s.peer()
}

// bigFraktor runs Big on a fraktor-go system.
func bigFraktor(sys *fraktor.System, n int) (int, error) {
	if n < bigActors {
		return 0, ErrBadSize
	}
	root := sys.Root()
	res := make(chan int, 1)
	total, done := 0, 0
	sink := root.Spawn(fraktor.PropsFromFunc(func(c fraktor.Context) {
		if m, ok := c.Message().(*bigDone); ok {
			total += m.pongs
			if done++; done == bigActors {
				res <- total
			}
		}
	}))
	peers := make([]*fraktor.PID, bigActors)
	defer func() {
		root.Stop(sink)
		for _, p := range peers {
			root.Stop(p)
		}
	}()
	for i := range peers {
		s := newBigState(i, share(n, bigActors, i))
		ps := peers // filled before any message is sent
		step := func(c fraktor.Context) {
			if p := s.next(); p >= 0 {
				c.Send(ps[p], s.ping)
			} else {
				c.Send(sink, &bigDone{s.pongs})
			}
		}
		peers[i] = root.Spawn(fraktor.PropsFromFunc(func(c fraktor.Context) {
			switch m := c.Message().(type) {
			case *bigPing:
				c.Send(ps[m.from], bigPongMsg)
			case *bigPong:
				s.pongs++
				step(c)
			case *start:
				step(c)
			}
		}))
	}
	for _, p := range peers {
		root.Send(p, startMsg)
	}
	return awaitValue(res)
}

// bigProto runs Big on a protoactor-go system.
func bigProto(sys *proto.ActorSystem, n int) (int, error) {
	if n < bigActors {
		return 0, ErrBadSize
	}
	root := sys.Root
	res := make(chan int, 1)
	total, done := 0, 0
	sink := root.Spawn(proto.PropsFromFunc(func(c proto.Context) {
		if m, ok := c.Message().(*bigDone); ok {
			total += m.pongs
			if done++; done == bigActors {
				res <- total
			}
		}
	}))
	peers := make([]*proto.PID, bigActors)
	defer func() {
		root.Stop(sink)
		for _, p := range peers {
			root.Stop(p)
		}
	}()
	for i := range peers {
		s := newBigState(i, share(n, bigActors, i))
		ps := peers // filled before any message is sent
		step := func(c proto.Context) {
			if p := s.next(); p >= 0 {
				c.Send(ps[p], s.ping)
			} else {
				c.Send(sink, &bigDone{s.pongs})
			}
		}
		peers[i] = root.Spawn(proto.PropsFromFunc(func(c proto.Context) {
			switch m := c.Message().(type) {
			case *bigPing:
				c.Send(ps[m.from], bigPongMsg)
			case *bigPong:
				s.pongs++
				step(c)
			case *start:
				step(c)
			}
		}))
	}
	for _, p := range peers {
		root.Send(p, startMsg)
	}
	return awaitValue(res)
}

// bigChan: the same with a goroutine per actor reading a channel buffered
// for every message it can have pending (a ping from each peer and its own
// pong), so no send blocks. Each message is one plain receive: once every
// actor has had all its pongs, every ping has been answered and nothing is
// in flight, so the caller closes the channels and the goroutines leave
// their range loop. Receiving in a select with a quit channel instead
// would cost about 2× (docs/benchmarks.md, "Baselines without a select
// per message"): a slower baseline.
func bigChan(n int) (int, error) {
	if n < bigActors {
		return 0, ErrBadSize
	}
	res := make(chan int, 1)
	var total, done atomic.Int64
	ins := make([]chan any, bigActors)
	for i := range ins {
		ins[i] = make(chan any, bigActors+1)
	}
	for i := range ins {
		s := newBigState(i, share(n, bigActors, i))
		go func(in <-chan any) {
			step := func() {
				if p := s.next(); p >= 0 {
					ins[p] <- s.ping
					return
				}
				total.Add(int64(s.pongs))
				if done.Add(1) == bigActors {
					res <- int(total.Load())
				}
			}
			step()
			for m := range in {
				switch m := m.(type) {
				case *bigPing:
					ins[m.from] <- bigPongMsg
				case *bigPong:
					s.pongs++
					step()
				}
			}
		}(ins[i])
	}
	got := <-res
	for _, in := range ins {
		close(in)
	}
	return got, nil
}
