package benchmarks

import (
	"math"
	"sync/atomic"

	proto "github.com/asynkron/protoactor-go/actor"

	fraktor "github.com/fraktor-go/fraktor/actor"
)

// Savina Fork-Join throughput: n messages are sent from outside, round
// robin, to forkJoinWorkers actors; each performs a small computation per
// message (a sine, as in Savina). The result is the number of messages the
// workers handled once all reported their share.

const forkJoinWorkers = 60

// fjCompute is Savina's per-message work; its result feeds an accumulator
// so the compiler cannot drop it.
func fjCompute(theta float64) float64 {
	s := math.Sin(theta)
	return s * s
}

type fjState struct {
	done     chan struct{}
	handled  atomic.Int64
	finished atomic.Int64
	sink     atomic.Uint64 // keeps the computation observable
}

func (s *fjState) finish(got int, acc float64) {
	s.handled.Add(int64(got))
	s.sink.Add(math.Float64bits(acc) & 1)
	if s.finished.Add(1) == forkJoinWorkers {
		close(s.done)
	}
}

// forkJoinFraktor runs Fork-Join throughput on a fraktor-go system.
func forkJoinFraktor(sys *fraktor.System, n int) (int, error) {
	if n < forkJoinWorkers {
		return 0, ErrBadSize
	}
	st := &fjState{done: make(chan struct{})}
	root := sys.Root()
	workers := make([]*fraktor.PID, forkJoinWorkers)
	for i := range workers {
		want, got, acc := share(n, forkJoinWorkers, i), 0, 0.0
		workers[i] = root.Spawn(fraktor.PropsFromFunc(func(c fraktor.Context) {
			if _, ok := c.Message().(*ping); ok {
				acc += fjCompute(float64(got))
				if got++; got == want {
					st.finish(got, acc)
				}
			}
		}))
	}
	defer func() {
		for _, p := range workers {
			root.Stop(p)
		}
	}()
	for i := range n {
		root.Send(workers[i%forkJoinWorkers], pingMsg)
	}
	if err := await(st.done); err != nil {
		return 0, err
	}
	return int(st.handled.Load()), nil
}

// forkJoinProto runs Fork-Join throughput on a protoactor-go system.
func forkJoinProto(sys *proto.ActorSystem, n int) (int, error) {
	if n < forkJoinWorkers {
		return 0, ErrBadSize
	}
	st := &fjState{done: make(chan struct{})}
	root := sys.Root
	workers := make([]*proto.PID, forkJoinWorkers)
	for i := range workers {
		want, got, acc := share(n, forkJoinWorkers, i), 0, 0.0
		workers[i] = root.Spawn(proto.PropsFromFunc(func(c proto.Context) {
			if _, ok := c.Message().(*ping); ok {
				acc += fjCompute(float64(got))
				if got++; got == want {
					st.finish(got, acc)
				}
			}
		}))
	}
	defer func() {
		for _, p := range workers {
			root.Stop(p)
		}
	}()
	for i := range n {
		root.Send(workers[i%forkJoinWorkers], pingMsg)
	}
	if err := await(st.done); err != nil {
		return 0, err
	}
	return int(st.handled.Load()), nil
}

// forkJoinChan: the same with forkJoinWorkers goroutines, each reading a
// buffered channel (64).
func forkJoinChan(n int) (int, error) {
	if n < forkJoinWorkers {
		return 0, ErrBadSize
	}
	st := &fjState{done: make(chan struct{})}
	ins := make([]chan *ping, forkJoinWorkers)
	for i := range ins {
		ins[i] = make(chan *ping, 64)
		want := share(n, forkJoinWorkers, i)
		go func(in <-chan *ping) {
			got, acc := 0, 0.0
			for range want {
				<-in
				acc += fjCompute(float64(got))
				got++
			}
			st.finish(got, acc)
		}(ins[i])
	}
	for i := range n {
		ins[i%forkJoinWorkers] <- pingMsg
	}
	<-st.done
	return int(st.handled.Load()), nil
}
