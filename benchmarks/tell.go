package benchmarks

import (
	proto "github.com/asynkron/protoactor-go/actor"

	fraktor "github.com/fraktor-go/fraktor/actor"
)

// Tell 1→1: n one-way messages sent from outside the system to one actor,
// which counts them; the result is the count the receiver saw once it
// signalled that it had all n. The sender does not wait per message.

// tellFraktor runs Tell on a fraktor-go system.
func tellFraktor(sys *fraktor.System, n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	done := make(chan struct{})
	got := 0
	pid := sys.Root().Spawn(fraktor.PropsFromFunc(func(c fraktor.Context) {
		if _, ok := c.Message().(*ping); ok {
			got++
			if got == n {
				close(done)
			}
		}
	}))
	defer sys.Root().Stop(pid)
	root := sys.Root()
	for i := 0; i < n; i++ {
		root.Send(pid, pingMsg)
	}
	if err := await(done); err != nil {
		return 0, err
	}
	return got, nil
}

// tellProto runs Tell on a protoactor-go system.
func tellProto(sys *proto.ActorSystem, n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	done := make(chan struct{})
	got := 0
	pid := sys.Root.Spawn(proto.PropsFromFunc(func(c proto.Context) {
		if _, ok := c.Message().(*ping); ok {
			got++
			if got == n {
				close(done)
			}
		}
	}))
	defer sys.Root.Stop(pid)
	root := sys.Root
	for i := 0; i < n; i++ {
		root.Send(pid, pingMsg)
	}
	if err := await(done); err != nil {
		return 0, err
	}
	return got, nil
}

// tellChan: the same with a buffered channel (1024) and a goroutine.
func tellChan(n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	ch := make(chan *ping, 1024)
	res := make(chan int, 1)
	go func() {
		got := 0
		for range n {
			if <-ch != nil {
				got++
			}
		}
		res <- got
	}()
	for i := 0; i < n; i++ {
		ch <- pingMsg
	}
	return <-res, nil
}

// tellSPSC: the same through a lock-free SPSC ring (1024 slots): the
// machine's limit for a one-way hand-off between two goroutines.
func tellSPSC(n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	r := newSPSC[*ping](1024)
	res := make(chan int, 1)
	go func() {
		got := 0
		for range n {
			if r.pop() != nil {
				got++
			}
		}
		res <- got
	}()
	for i := 0; i < n; i++ {
		r.push(pingMsg)
	}
	return <-res, nil
}
