package benchmarks

import (
	"sync"
	"sync/atomic"

	proto "github.com/asynkron/protoactor-go/actor"

	fraktor "github.com/fraktor-go/fraktor/actor"
)

// Spawn+stop, two shapes:
//   - pipelined: spawn an actor and stop it without waiting, n times; all n
//     Stopped messages are awaited at the end (throughput of lives);
//   - synchronous: spawn, stop and wait for the termination before the
//     next one (latency of one life).
//
// The result is the number of actors that handled Stopped.

// spawnStopFraktor runs pipelined Spawn+stop on a fraktor-go system.
func spawnStopFraktor(sys *fraktor.System, n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	done := make(chan struct{})
	var stopped atomic.Int64
	props := fraktor.PropsFromFunc(func(c fraktor.Context) {
		if _, ok := c.Message().(*fraktor.Stopped); ok {
			if stopped.Add(1) == int64(n) {
				close(done)
			}
		}
	})
	root := sys.Root()
	for range n {
		root.Stop(root.Spawn(props))
	}
	if err := await(done); err != nil {
		return 0, err
	}
	return int(stopped.Load()), nil
}

// spawnStopProto runs pipelined Spawn+stop on a protoactor-go system.
func spawnStopProto(sys *proto.ActorSystem, n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	done := make(chan struct{})
	var stopped atomic.Int64
	props := proto.PropsFromFunc(func(c proto.Context) {
		if _, ok := c.Message().(*proto.Stopped); ok {
			if stopped.Add(1) == int64(n) {
				close(done)
			}
		}
	})
	root := sys.Root
	for range n {
		root.Stop(root.Spawn(props))
	}
	if err := await(done); err != nil {
		return 0, err
	}
	return int(stopped.Load()), nil
}

// spawnStopGo: pipelined start and stop of a goroutine that waits on its
// own stop channel.
func spawnStopGo(n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	done := make(chan struct{})
	var stopped atomic.Int64
	for range n {
		stop := make(chan struct{})
		go func() {
			<-stop
			if stopped.Add(1) == int64(n) {
				close(done)
			}
		}()
		close(stop)
	}
	<-done
	return int(stopped.Load()), nil
}

// spawnStopSyncFraktor runs synchronous Spawn+stop on a fraktor-go system.
func spawnStopSyncFraktor(sys *fraktor.System, n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	var stopped atomic.Int64
	props := fraktor.PropsFromFunc(func(c fraktor.Context) {
		if _, ok := c.Message().(*fraktor.Stopped); ok {
			stopped.Add(1)
		}
	})
	root := sys.Root()
	for range n {
		if err := root.StopFuture(root.Spawn(props)).Wait(); err != nil {
			return int(stopped.Load()), err
		}
	}
	return int(stopped.Load()), nil
}

// spawnStopSyncProto runs synchronous Spawn+stop on a protoactor-go system.
func spawnStopSyncProto(sys *proto.ActorSystem, n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	var stopped atomic.Int64
	props := proto.PropsFromFunc(func(c proto.Context) {
		if _, ok := c.Message().(*proto.Stopped); ok {
			stopped.Add(1)
		}
	})
	root := sys.Root
	for range n {
		if err := root.StopFuture(root.Spawn(props)).Wait(); err != nil {
			return int(stopped.Load()), err
		}
	}
	return int(stopped.Load()), nil
}

// spawnStopSyncGo: start a goroutine, tell it to stop and wait for it to
// end, n times. The join is one WaitGroup reused for every life, not a
// channel made per life: one allocation less, about 10 % faster
// (docs/benchmarks.md, "Spawn and stop on the caller").
func spawnStopSyncGo(n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	stopped := 0
	var ended sync.WaitGroup
	for range n {
		stop := make(chan struct{})
		ended.Add(1)
		go func() {
			<-stop
			ended.Done()
		}()
		close(stop)
		ended.Wait()
		stopped++
	}
	return stopped, nil
}
