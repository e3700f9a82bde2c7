package actor_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// stormMsg is what the senders send: one shared value, so that sending
// allocates nothing and the heap measures what the runtime keeps.
var stormMsg any = &struct{ n int }{}

// storm starts n goroutines that send to pid until the returned stop
// function is called; started is closed once every sender has sent.
func storm(sys *actor.System, pid *actor.PID, n int) (started <-chan struct{}, stop func()) {
	quit := make(chan struct{})
	var ready sync.WaitGroup
	var wg sync.WaitGroup
	ready.Add(n)
	for range n {
		wg.Go(func() {
			sys.Root().Send(pid, stormMsg)
			ready.Done()
			for {
				select {
				case <-quit:
					return
				default:
				}
				for range 64 {
					sys.Root().Send(pid, stormMsg)
				}
			}
		})
	}
	s := make(chan struct{})
	go func() { ready.Wait(); close(s) }()
	return s, func() { close(quit); wg.Wait() }
}

// A stop finishes while senders keep sending to the actor: the drain takes
// what was queued when the mailbox closed, later sends become dead letters
// on the senders' side (counted, published, a request's future answered at
// once), and memory stays flat. The test logs the stop latency and the heap
// growth during the stop.
func TestStopUnderSendStorm(t *testing.T) {
	const senders = 4
	sys, err := actor.NewSystem(actor.SystemConfig{})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, sys.Shutdown(ctx))
	})
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	h0 := heapInUse()
	started, stopStorm := storm(sys, pid, senders)
	defer stopStorm()
	<-started

	dl0 := sys.DeadLetters()
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err = sys.Root().StopFuture(pid).ResultContext(ctx)
	latency := time.Since(t0)
	drained := sys.DeadLetters() - dl0
	h1 := heapInUse()
	growth := int64(h1) - int64(h0)
	t.Logf("senders=%d stop latency=%v dead letters during the stop=%d heap in use before the storm %.1f MiB, after the stop %.1f MiB (growth %+.1f MiB)",
		senders, latency, drained, float64(h0)/(1<<20), float64(h1)/(1<<20), float64(growth)/(1<<20))
	require.NoError(t, err, "the stop finishes while the senders keep sending")
	require.Less(t, growth, int64(64<<20), "nothing is kept once the stop has finished")

	// The storm goes on; a send now becomes a dead letter inside the send.
	dl := sys.DeadLetters()
	// Only the request's dead letter: the storm's would fill the probe's
	// buffer and push it out.
	events := testkit.NewEventProbe(t, sys, func(e any) bool {
		dl, ok := e.(*actor.DeadLetterEvent)
		return ok && dl.Message == "ping"
	})
	f := sys.Root().RequestFuture(pid, "ping", 0)
	select {
	case <-f.Done():
	default:
		t.Fatal("a request to the stopped actor is answered on the sender's side, at once")
	}
	require.ErrorIs(t, f.Wait(), actor.ErrDeadLetter)
	require.Greater(t, sys.DeadLetters(), dl, "sender-side dead letters are counted")
	e := testkit.ExpectEvent[*actor.DeadLetterEvent](events, 0)
	require.True(t, e.PID.Equal(pid))
	require.Equal(t, f.PID(), e.Sender)
}

// Shutdown under a send storm ends within its context.
func TestShutdownUnderSendStorm(t *testing.T) {
	grab := &hostGrab{}
	sys, err := actor.NewSystem(actor.SystemConfig{Extensions: []actor.ExtensionInstaller{grab}})
	require.NoError(t, err)
	var pids []*actor.PID
	var stops []func()
	for range 2 {
		pid := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
		started, stop := storm(sys, pid, 2)
		<-started
		pids = append(pids, pid)
		stops = append(stops, stop)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	err = sys.Shutdown(ctx)
	for _, stop := range stops {
		stop()
	}
	require.NoError(t, err)
	for _, pid := range pids {
		_, ok := grab.host.Lookup(pid.ID)
		require.False(t, ok, "stopped and unregistered")
	}
}

// BenchmarkSendToStopped is the cost of a send that becomes a dead letter on
// the sender's side, from several goroutines at once: what each sender of a
// send storm pays once its target has stopped.
func BenchmarkSendToStopped(b *testing.B) {
	sys, err := actor.NewSystem(actor.SystemConfig{})
	require.NoError(b, err)
	defer func() { require.NoError(b, sys.Shutdown(context.Background())) }()
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	require.NoError(b, sys.Root().StopFuture(pid).Wait())
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			sys.Root().Send(pid, stormMsg)
		}
	})
}
