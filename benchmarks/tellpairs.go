package benchmarks

import (
	"sync/atomic"

	proto "github.com/asynkron/protoactor-go/actor"

	fraktor "github.com/fraktor-go/fraktor/actor"
)

// Tell N→N: `pairs` sender actors each send their share of n one-way
// messages to their own receiver actor. A sender sends tellBurst messages
// per invocation and then sends itself a continuation, so senders
// interleave on the workers instead of each holding one for its whole
// share. The result is the total the receivers counted.

const (
	tellPairs = 8
	tellBurst = 256
)

// share splits n over k parts: part i gets n/k, plus one for the first n%k.
func share(n, k, i int) int {
	s := n / k
	if i < n%k {
		s++
	}
	return s
}

type burst struct {
	to   any // *fraktor.PID or *proto.PID
	left int
}

// tellPairsFraktor runs Tell N→N on a fraktor-go system.
func tellPairsFraktor(sys *fraktor.System, n int) (int, error) {
	if n < tellPairs {
		return 0, ErrBadSize
	}
	done := make(chan struct{})
	var total, finished atomic.Int64
	root := sys.Root()
	var pids []*fraktor.PID
	defer func() {
		for _, p := range pids {
			root.Stop(p)
		}
	}()
	for i := range tellPairs {
		want := share(n, tellPairs, i)
		got := 0
		recv := root.Spawn(fraktor.PropsFromFunc(func(c fraktor.Context) {
			if _, ok := c.Message().(*ping); ok {
				got++
				if got == want {
					total.Add(int64(got))
					if finished.Add(1) == tellPairs {
						close(done)
					}
				}
			}
		}))
		send := root.Spawn(fraktor.PropsFromFunc(func(c fraktor.Context) {
			if b, ok := c.Message().(*burst); ok {
				to := b.to.(*fraktor.PID)
				k := min(b.left, tellBurst)
				for range k {
					c.Send(to, pingMsg)
				}
				if b.left -= k; b.left > 0 {
					c.Send(c.Self(), b)
				}
			}
		}))
		pids = append(pids, recv, send)
		root.Send(send, &burst{to: recv, left: want})
	}
	if err := await(done); err != nil {
		return 0, err
	}
	return int(total.Load()), nil
}

// tellPairsProto runs Tell N→N on a protoactor-go system.
func tellPairsProto(sys *proto.ActorSystem, n int) (int, error) {
	if n < tellPairs {
		return 0, ErrBadSize
	}
	done := make(chan struct{})
	var total, finished atomic.Int64
	root := sys.Root
	var pids []*proto.PID
	defer func() {
		for _, p := range pids {
			root.Stop(p)
		}
	}()
	for i := range tellPairs {
		want := share(n, tellPairs, i)
		got := 0
		recv := root.Spawn(proto.PropsFromFunc(func(c proto.Context) {
			if _, ok := c.Message().(*ping); ok {
				got++
				if got == want {
					total.Add(int64(got))
					if finished.Add(1) == tellPairs {
						close(done)
					}
				}
			}
		}))
		send := root.Spawn(proto.PropsFromFunc(func(c proto.Context) {
			if b, ok := c.Message().(*burst); ok {
				to := b.to.(*proto.PID)
				k := min(b.left, tellBurst)
				for range k {
					c.Send(to, pingMsg)
				}
				if b.left -= k; b.left > 0 {
					c.Send(c.Self(), b)
				}
			}
		}))
		pids = append(pids, recv, send)
		root.Send(send, &burst{to: recv, left: want})
	}
	if err := await(done); err != nil {
		return 0, err
	}
	return int(total.Load()), nil
}

// tellPairsChan: the same with goroutine pairs and buffered channels
// (tellBurst slots each).
func tellPairsChan(n int) (int, error) {
	if n < tellPairs {
		return 0, ErrBadSize
	}
	res := make(chan int, tellPairs)
	for i := range tellPairs {
		want := share(n, tellPairs, i)
		ch := make(chan *ping, tellBurst)
		go func() {
			got := 0
			for range want {
				if <-ch != nil {
					got++
				}
			}
			res <- got
		}()
		go func() {
			for range want {
				ch <- pingMsg
			}
		}()
	}
	total := 0
	for range tellPairs {
		total += <-res
	}
	return total, nil
}
