package actor_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

func newBenchSystem(b *testing.B) *actor.System {
	b.Helper()
	sys, err := actor.NewSystem(actor.SystemConfig{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sys.Shutdown(context.Background()) })
	return sys
}

// BenchmarkTell: one-way tell from outside to one actor (1→1).
func BenchmarkTell(b *testing.B) {
	sys := newBenchSystem(b)
	var wg sync.WaitGroup
	n := 0
	target := b.N
	wg.Add(1)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*ping); ok {
			n++
			if n == target {
				wg.Done()
			}
		}
	}))
	msg := &ping{}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sys.Root().Send(pid, msg)
	}
	wg.Wait()
}

// BenchmarkPingPong: actor↔actor round trip.
func BenchmarkPingPong(b *testing.B) {
	b.Run("runnext=on", func(b *testing.B) { benchPingPong(b, newBenchSystem(b)) })
	b.Run("runnext=off", func(b *testing.B) {
		sys, err := actor.NewSystem(actor.SystemConfig{DisableRunNext: true})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = sys.Shutdown(context.Background()) })
		benchPingPong(b, sys)
	})
}

func benchPingPong(b *testing.B, sys *actor.System) {
	done := make(chan struct{})
	echo := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*ping); ok {
			c.Respond(m)
		}
	}))
	target := b.N
	msg := &ping{}
	n := 0
	pinger := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *pong:
			c.Request(echo, msg)
		case *ping:
			n++
			if n == target {
				close(done)
				return
			}
			c.Request(echo, msg)
		}
	}))
	b.ReportAllocs()
	b.ResetTimer()
	sys.Root().Send(pinger, &pong{})
	<-done
}

// BenchmarkRequest: request/response from outside the system.
func BenchmarkRequest(b *testing.B) {
	sys := newBenchSystem(b)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*ping); ok {
			c.Respond(m)
		}
	}))
	ctx := context.Background()
	msg := &ping{}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := actor.Request[*ping](ctx, sys.Root(), pid, msg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSpawnStop: spawn an actor and stop it; all stops are awaited at
// the end (the Stopped handler counts them), so spawns and stops pipeline.
func BenchmarkSpawnStop(b *testing.B) {
	sys := newBenchSystem(b)
	var wg sync.WaitGroup
	wg.Add(b.N)
	props := actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Stopped); ok {
			wg.Done()
		}
	})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sys.Root().Stop(sys.Root().Spawn(props))
	}
	wg.Wait()
}

// BenchmarkSpawnStopSync: spawn an actor, stop it and wait for its
// Terminated before the next one: the latency of one life.
func BenchmarkSpawnStopSync(b *testing.B) {
	sys := newBenchSystem(b)
	props := actor.PropsFromFunc(func(c actor.Context) {})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pid := sys.Root().Spawn(props)
		if err := sys.Root().StopFuture(pid).Wait(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSpawnNamedStopSync is BenchmarkSpawnStopSync for a spawn by
// name: the name is reserved, then filled with its actor.
func BenchmarkSpawnNamedStopSync(b *testing.B) {
	sys := newBenchSystem(b)
	props := actor.PropsFromFunc(func(c actor.Context) {})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pid, err := sys.Root().SpawnNamed(props, "named")
		if err != nil {
			b.Fatal(err)
		}
		if err := sys.Root().StopFuture(pid).Wait(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRequestFutureTimeout: RequestFuture with a timeout and Result,
// from outside the system; compare with BenchmarkRequest (no timeout). The
// timeout is a node on the system's timer queue, not a runtime timer.
func BenchmarkRequestFutureTimeout(b *testing.B) {
	sys := newBenchSystem(b)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*ping); ok {
			c.Respond(m)
		}
	}))
	msg := &ping{}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := sys.Root().RequestFuture(pid, msg, 5*time.Second).Result(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTimerArmCancel: an actor arms a single timer and cancels it.
func BenchmarkTimerArmCancel(b *testing.B) {
	sys := newBenchSystem(b)
	done := make(chan struct{})
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if c.Message() == "go" {
			for i := 0; i < b.N; i++ {
				c.SendAfter(time.Minute, c.Self(), i).Cancel()
			}
			close(done)
		}
	}))
	b.ReportAllocs()
	b.ResetTimer()
	sys.Root().Send(pid, "go")
	<-done
}

// BenchmarkTimers100k: 100,000 keyed timers armed by one actor; reports
// the heap bytes and goroutines each costs.
func BenchmarkTimers100k(b *testing.B) {
	const n = 100_000
	for i := 0; i < b.N; i++ {
		sys := newBenchSystem(b)
		done := make(chan struct{})
		pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
			if c.Message() == "go" {
				for k := 0; k < n; k++ {
					c.Timers().StartSingle(k, time.Hour, k)
				}
				close(done)
			}
		}))
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		g := runtime.NumGoroutine()
		sys.Root().Send(pid, "go")
		<-done
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/timer")
		b.ReportMetric(float64(runtime.NumGoroutine()-g), "goroutines")
		if err := sys.Root().StopFuture(pid).Wait(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReenterAfter: an actor requests another and continues on its own
// turn with the answer (ReenterAfter), one request at a time; compare with
// BenchmarkPingPong (the same round trip answered by Respond into Receive).
func BenchmarkReenterAfter(b *testing.B) {
	sys := newBenchSystem(b)
	echo := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*ping); ok {
			c.Respond(m)
		}
	}))
	done := make(chan struct{})
	msg := &ping{}
	n := b.N
	var next func(c actor.Context)
	next = func(c actor.Context) {
		c.ReenterAfter(c.RequestFuture(echo, msg, 0), func(any, error) {
			if n--; n == 0 {
				close(done)
				return
			}
			next(c)
		})
	}
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if c.Message() == "go" {
			next(c)
		}
	}))
	b.ReportAllocs()
	b.ResetTimer()
	sys.Root().Send(pid, "go")
	<-done
}

// BenchmarkSpawnMiddleware: SpawnStop from inside an actor whose Props carry
// a pass-through spawn middleware, against none.
func BenchmarkSpawnMiddleware(b *testing.B) {
	pass := func(next actor.SpawnFunc) actor.SpawnFunc { return next }
	for _, bc := range []struct {
		name string
		opts []actor.PropsOption
	}{{"none", nil}, {"one", []actor.PropsOption{actor.WithSpawnMiddleware(pass)}}} {
		b.Run("mw="+bc.name, func(b *testing.B) {
			sys := newBenchSystem(b)
			child := actor.PropsFromFunc(func(actor.Context) {})
			done := make(chan struct{})
			parent := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
				if c.Message() == "go" {
					for i := 0; i < b.N; i++ {
						c.Stop(c.Spawn(child))
					}
					close(done)
				}
			}, bc.opts...))
			b.ReportAllocs()
			b.ResetTimer()
			sys.Root().Send(parent, "go")
			<-done
		})
	}
}
