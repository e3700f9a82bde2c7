package actor

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/scheduler"
)

type recordTarget struct {
	name string
	log  *[]string
}

func (r *recordTarget) fireTimer() { *r.log = append(*r.log, r.name) }

type countTarget struct{ n int }

func (c *countTarget) fireTimer() { c.n++ }

// The queue fires in deadline order, ties in arming order, and holds one
// clock timer whatever the number of nodes.
func TestTimerQueueOrderOnManualClock(t *testing.T) {
	clock := scheduler.NewManualClock(time.Unix(0, 0))
	q := newTimerQueue(clock)
	defer q.close()
	var log []string
	nodes := map[string]*timerNode{}
	for _, s := range []struct {
		name string
		d    time.Duration
	}{{"c", 30 * time.Millisecond}, {"a", 10 * time.Millisecond}, {"b1", 20 * time.Millisecond}, {"b2", 20 * time.Millisecond}, {"x", 25 * time.Millisecond}} {
		n := &timerNode{target: &recordTarget{name: s.name, log: &log}}
		nodes[s.name] = n
		require.True(t, q.arm(n, s.d, 0))
	}
	require.Equal(t, 1, clock.Pending(), "one clock timer for the earliest deadline")
	require.True(t, q.cancel(nodes["x"]))
	require.False(t, q.cancel(nodes["x"]), "cancelled twice")
	clock.Advance(15 * time.Millisecond)
	require.Equal(t, []string{"a"}, log)
	require.False(t, q.cancel(nodes["a"]), "fired already")
	clock.Advance(time.Second)
	require.Equal(t, []string{"a", "b1", "b2", "c"}, log)
	require.Equal(t, 0, q.len())
}

// A periodic node fires once per period in virtual time and stops for good
// when cancelled.
func TestTimerQueuePeriodic(t *testing.T) {
	clock := scheduler.NewManualClock(time.Unix(0, 0))
	q := newTimerQueue(clock)
	defer q.close()
	c := &countTarget{}
	n := &timerNode{target: c}
	require.True(t, q.arm(n, 100*time.Millisecond, 100*time.Millisecond))
	clock.Advance(time.Second)
	require.Equal(t, 10, c.n)
	require.True(t, q.cancel(n))
	clock.Advance(time.Second)
	require.Equal(t, 10, c.n)
}

// An earlier deadline armed later moves the clock timer forward.
func TestTimerQueueEarlierDeadlineRearms(t *testing.T) {
	clock := scheduler.NewManualClock(time.Unix(0, 0))
	q := newTimerQueue(clock)
	defer q.close()
	late, early := &countTarget{}, &countTarget{}
	require.True(t, q.arm(&timerNode{target: late}, time.Hour, 0))
	require.True(t, q.arm(&timerNode{target: early}, time.Millisecond, 0))
	at, ok := clock.NextDeadline()
	require.True(t, ok)
	require.Equal(t, time.Unix(0, 0).Add(time.Millisecond), at)
	clock.Advance(time.Millisecond)
	require.Equal(t, 1, early.n)
	require.Equal(t, 0, late.n)
}

// Closed, the queue fires nothing and refuses new nodes.
func TestTimerQueueClose(t *testing.T) {
	clock := scheduler.NewManualClock(time.Unix(0, 0))
	q := newTimerQueue(clock)
	c := &countTarget{}
	require.True(t, q.arm(&timerNode{target: c}, time.Millisecond, 0))
	q.close()
	q.close()
	clock.Advance(time.Second)
	require.Equal(t, 0, c.n)
	require.False(t, q.arm(&timerNode{target: c}, time.Millisecond, 0))
}

// The heap stays a heap under random arms and cancels (a model check).
func TestTimerQueueRandomAgainstModel(t *testing.T) {
	clock := scheduler.NewManualClock(time.Unix(0, 0))
	q := newTimerQueue(clock)
	defer q.close()
	var log []string
	r := rand.New(rand.NewPCG(1, 2))
	var live []*timerNode
	type want struct {
		at   int64
		seq  uint64
		name string
	}
	model := map[*timerNode]want{}
	for i := 0; i < 2000; i++ {
		if len(live) > 0 && r.IntN(3) == 0 {
			j := r.IntN(len(live))
			n := live[j]
			live = append(live[:j], live[j+1:]...)
			require.True(t, q.cancel(n))
			delete(model, n)
			continue
		}
		name := string(rune('a'+i%26)) + time.Duration(i).String()
		n := &timerNode{target: &recordTarget{name: name, log: &log}}
		require.True(t, q.arm(n, time.Duration(r.IntN(1000))*time.Millisecond, 0))
		live = append(live, n)
		model[n] = want{at: n.at, seq: n.seq, name: name}
	}
	var expect []want
	for _, w := range model {
		expect = append(expect, w)
	}
	slices.SortFunc(expect, func(a, b want) int {
		if c := cmp.Compare(a.at, b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	clock.Advance(2 * time.Second)
	require.Len(t, log, len(expect))
	for i, w := range expect {
		require.Equal(t, w.name, log[i])
	}
}

// On the wall clock, nodes armed and cancelled from many goroutines fire
// exactly when not cancelled.
func TestTimerQueueConcurrentWallClock(t *testing.T) {
	q := newTimerQueue(scheduler.SystemClock{})
	defer q.close()
	var fired sync.WaitGroup
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Go(func() {
			for i := 0; i < 500; i++ {
				n := &timerNode{}
				if i%2 == 0 {
					fired.Add(1)
					n.target = doneTarget{&fired}
					q.arm(n, time.Duration(i%7)*time.Millisecond, 0)
					continue
				}
				n.target = panicTarget{}
				q.arm(n, time.Hour, 0)
				require.True(t, q.cancel(n))
			}
		})
	}
	wg.Wait()
	fired.Wait()
}

type doneTarget struct{ wg *sync.WaitGroup }

func (d doneTarget) fireTimer() { d.wg.Done() }

type panicTarget struct{}

func (panicTarget) fireTimer() { panic("cancelled node fired") }

// A request timeout costs a heap node, not a runtime timer or a goroutine:
// 100,000 futures with a timeout add no goroutine and fail together when
// virtual time passes their deadline.
func TestRequestTimeoutsShareOneClockTimer(t *testing.T) {
	clock := scheduler.NewManualClock(time.Unix(0, 0))
	sys, err := NewSystem(SystemConfig{Clock: clock})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, sys.Shutdown(context.Background())) })
	g := runtime.NumGoroutine()
	futs := make([]*Future, 100_000)
	for i := range futs {
		futs[i] = sys.newFuture(nil, time.Second)
	}
	require.Equal(t, 100_000, sys.tq.len())
	require.LessOrEqual(t, runtime.NumGoroutine(), g)
	require.Equal(t, 1, clock.Pending(), "one clock timer")
	clock.Advance(time.Second)
	for _, f := range futs {
		require.ErrorIs(t, f.Wait(), ErrTimeout)
	}
	require.Equal(t, 0, sys.tq.len())
}

// A stopped actor leaves nothing armed on the timer queue, also
// timers it armed while stopping.
func TestStoppedActorLeavesNoTimerArmed(t *testing.T) {
	sys, err := NewSystem(SystemConfig{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, sys.Shutdown(context.Background())) })
	armed := make(chan struct{})
	pid := sys.Root().Spawn(PropsFromFunc(func(c Context) {
		switch c.Message().(type) {
		case *Started:
			c.Timers().StartPeriodic("beat", time.Hour, "tick")
			c.SendAfter(time.Hour, c.Self(), "once")
			close(armed)
		case *Stopping:
			c.SendEvery(time.Hour, c.Self(), "set while stopping")
		}
	}))
	<-armed
	require.Equal(t, 2, actorNodes(sys))
	require.NoError(t, sys.Root().StopFuture(pid).Wait())
	require.Equal(t, 0, actorNodes(sys))
}

// actorNodes returns the number of armed nodes of sys's timer queue, not
// counting the sweep of deferred turns (future_deferred.go).
func actorNodes(sys *System) int {
	q := sys.tq
	q.mu.Lock()
	defer q.mu.Unlock()
	n := len(q.heap)
	if i := int(sys.sweep.index); i >= 0 && i < n && q.heap[i] == &sys.sweep {
		n--
	}
	return n
}

// A duration too long to add to the clock's time (a "no timeout" written
// as math.MaxInt64) is a deadline that never comes: it neither fires at
// once nor hides the deadlines armed after it. Before, now+d overflowed to
// a deadline in the past, which sat at the top of the heap with the clock
// timer set for ~292 years: the node fired with the next other timer, and
// no timer armed later fired at all (a RequestFuture with that timeout
// froze every timeout and actor timer of the system). A periodic node
// whose period would carry it past the end of time stops there too.
func TestTimerQueueHugeDurations(t *testing.T) {
	clock := scheduler.NewManualClock(time.Unix(0, 0))
	q := newTimerQueue(clock)
	defer q.close()
	clock.Advance(time.Second) // a deadline base above zero, as in a running system
	var forever, never, short countTarget
	require.True(t, q.arm(&timerNode{target: &forever}, math.MaxInt64, 0))
	require.True(t, q.arm(&timerNode{target: &never}, math.MaxInt64-time.Millisecond, math.MaxInt64))
	require.True(t, q.arm(&timerNode{target: &short}, 10*time.Millisecond, 0))
	clock.Advance(10 * time.Millisecond)
	require.Equal(t, 1, short.n, "a timer armed after a huge one fires at its deadline")
	require.Zero(t, forever.n, "a huge timer does not fire")
	require.Zero(t, never.n)
	clock.Advance(100 * 365 * 24 * time.Hour)
	require.Zero(t, forever.n+never.n)

	// A periodic node whose next period overflows stays armed, unfired.
	var p countTarget
	n := &timerNode{target: &p}
	require.True(t, q.arm(n, time.Millisecond, math.MaxInt64-1))
	clock.Advance(time.Millisecond)
	require.Equal(t, 1, p.n)
	clock.Advance(time.Hour)
	require.Equal(t, 1, p.n, "the period past the end of time never comes")
	require.True(t, q.cancel(n))
}

type closeTarget struct {
	name string
	log  *[]string
}

func (c *closeTarget) fireTimer()  { *c.log = append(*c.log, "fired "+c.name) }
func (c *closeTarget) closeTimer() { *c.log = append(*c.log, c.name) }

// A node armed by armClose never fires and sets no clock timer; cancel
// takes it out (whichever position it holds), and close tells the ones
// left, with the heap's closers.
func TestTimerQueueArmClose(t *testing.T) {
	clock := scheduler.NewManualClock(time.Unix(0, 0))
	q := newTimerQueue(clock)
	var log []string
	nodes := map[string]*timerNode{}
	for _, name := range []string{"a", "b", "c", "d"} {
		n := &timerNode{target: &closeTarget{name: name, log: &log}}
		nodes[name] = n
		require.True(t, q.armClose(n))
	}
	require.Equal(t, 0, clock.Pending(), "no clock timer")
	require.Equal(t, 0, q.len(), "not in the heap")
	require.True(t, q.cancel(nodes["b"]))
	require.False(t, q.cancel(nodes["b"]), "cancelled twice")
	require.True(t, q.cancel(nodes["a"]))
	timed := &timerNode{target: &closeTarget{name: "timed", log: &log}}
	require.True(t, q.arm(timed, time.Hour, 0))
	clock.Advance(2 * time.Hour)
	require.Equal(t, []string{"fired timed"}, log, "a close node never fires")
	require.True(t, q.armClose(nodes["a"]), "armed again after its cancel")
	q.close()
	slices.Sort(log[1:])
	require.Equal(t, []string{"fired timed", "a", "c", "d"}, log)
	require.False(t, q.cancel(nodes["c"]), "closed")
	require.False(t, q.armClose(nodes["b"]), "closed")
}
