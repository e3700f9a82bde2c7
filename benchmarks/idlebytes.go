package benchmarks

import (
	"runtime"
	"sync/atomic"

	proto "github.com/asynkron/protoactor-go/actor"

	fraktor "github.com/fraktor-go/fraktor/actor"
)

// Bytes per idle actor: spawn k actors, send each one message and wait
// until all have handled it, then compare the live heap plus goroutine
// stacks (runtime.MemStats HeapAlloc + StackInuse, after a GC) with the
// figure before the spawns. The actors are stopped, their Stopped awaited,
// and the figure read once more: the baseline is the lower of the figures
// before and after the actors, so memory that something else (an earlier
// system still shutting down asynchronously, as protoactor-go's Shutdown
// does) frees while the actors live does not cancel out theirs. The result
// is the number of actors that handled their message and the bytes per
// actor.

// liveBytes forces two GCs and returns HeapAlloc + StackInuse. One GC
// leaves sync.Pool contents in the pools' victim caches (and the race
// detector's bookkeeping of them) until the next; an earlier workload's
// pooled objects freed between the readings made a figure go negative
// (TestWorkloads, 1 run in 30 under -race).
func liveBytes() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}

// perActor divides the growth from the baseline, the lower of before and
// end, to after over k.
func perActor(before, after, end uint64, k int) float64 {
	base := min(before, end)
	if after < base {
		return 0
	}
	return float64(after-base) / float64(k)
}

// idleFraktor measures bytes per idle fraktor-go actor.
func idleFraktor(sys *fraktor.System, k int) (int, float64, error) {
	if k < 1 {
		return 0, 0, ErrBadSize
	}
	root := sys.Root()
	pids := make([]*fraktor.PID, k)
	received, stopped := make(chan struct{}), make(chan struct{})
	var got, gone atomic.Int64
	props := fraktor.PropsFromFunc(func(c fraktor.Context) {
		switch c.Message().(type) {
		case *ping:
			if got.Add(1) == int64(k) {
				close(received)
			}
		case *fraktor.Stopped:
			if gone.Add(1) == int64(k) {
				close(stopped)
			}
		}
	})
	before := liveBytes()
	for i := range pids {
		pids[i] = root.Spawn(props)
		root.Send(pids[i], pingMsg)
	}
	if err := await(received); err != nil {
		return 0, 0, err
	}
	after := liveBytes()
	for _, p := range pids {
		root.Stop(p)
	}
	if err := await(stopped); err != nil {
		return 0, 0, err
	}
	end := liveBytes()
	runtime.KeepAlive(pids)
	return int(got.Load()), perActor(before, after, end, k), nil
}

// idleProto measures bytes per idle protoactor-go actor.
func idleProto(sys *proto.ActorSystem, k int) (int, float64, error) {
	if k < 1 {
		return 0, 0, ErrBadSize
	}
	root := sys.Root
	pids := make([]*proto.PID, k)
	received, stopped := make(chan struct{}), make(chan struct{})
	var got, gone atomic.Int64
	props := proto.PropsFromFunc(func(c proto.Context) {
		switch c.Message().(type) {
		case *ping:
			if got.Add(1) == int64(k) {
				close(received)
			}
		case *proto.Stopped:
			if gone.Add(1) == int64(k) {
				close(stopped)
			}
		}
	})
	before := liveBytes()
	for i := range pids {
		pids[i] = root.Spawn(props)
		root.Send(pids[i], pingMsg)
	}
	if err := await(received); err != nil {
		return 0, 0, err
	}
	after := liveBytes()
	for _, p := range pids {
		root.Stop(p)
	}
	if err := await(stopped); err != nil {
		return 0, 0, err
	}
	end := liveBytes()
	runtime.KeepAlive(pids)
	return int(got.Load()), perActor(before, after, end, k), nil
}

// idleGo measures bytes per idle goroutine blocked on its own channel
// after it received one message (the usual goroutine-as-actor shape).
func idleGo(k int) (int, float64, error) {
	if k < 1 {
		return 0, 0, ErrBadSize
	}
	ins := make([]chan *ping, k)
	received, stopped := make(chan struct{}), make(chan struct{})
	var got, gone atomic.Int64
	before := liveBytes()
	for i := range ins {
		in := make(chan *ping, 1)
		ins[i] = in
		go func() {
			for range in {
				if got.Add(1) == int64(k) {
					close(received)
				}
			}
			if gone.Add(1) == int64(k) {
				close(stopped)
			}
		}()
		in <- pingMsg
	}
	<-received
	after := liveBytes()
	for _, in := range ins {
		close(in)
	}
	<-stopped
	end := liveBytes()
	runtime.KeepAlive(ins)
	return int(got.Load()), perActor(before, after, end, k), nil
}
