package testkit

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/scheduler"
)

// newFaultRegistry is one member's view of a fresh registry on a virtual
// clock (VirtualRegistry's timing: R 100 ms, F 400 ms, T 600 ms).
func newFaultRegistry(t *testing.T) (*memberRegistry, *scheduler.ManualClock) {
	t.Helper()
	clk := scheduler.NewManualClock(time.Unix(0, 0))
	cfg := VirtualRegistry()
	cfg.Clock = clk
	reg, err := cluster.NewMemoryRegistry(cfg)
	require.NoError(t, err)
	t.Cleanup(reg.Close)
	return &memberRegistry{reg: reg, src: clk, local: newDriftClock(clk), latency: &atomic.Int64{}}, clk
}

func faultMember(id string) cluster.Member {
	return cluster.Member{ID: id, Incarnation: 1, Address: "127.0.0.1:1"}
}

// A slow registry's join reaches the registry d after the call, and each
// renewal's answer reaches the member d after it was sent: the lease the
// member sees was renewed at least d and at most d + R ago (with no
// latency, less than R ago), and its deadline is that renewal plus F.
func TestSlowRegistryDelaysJoinAndRenewals(t *testing.T) {
	for _, d := range []time.Duration{0, 150 * time.Millisecond} {
		t.Run(d.String(), func(t *testing.T) {
			mr, clk := newFaultRegistry(t)
			mr.latency.Store(int64(d))
			lt := mr.reg.LeaseTiming()
			joined := make(chan cluster.Membership, 1)
			go func() {
				m, err := mr.Join(context.Background(), faultMember("a"))
				assert.NoError(t, err)
				joined <- m
			}()
			var m cluster.Membership
			if d > 0 {
				// The join waits on the clock: its timer is pending.
				require.Eventually(t, func() bool { return clk.Pending() == 1 }, 5*time.Second, time.Millisecond)
				clk.Advance(d - time.Millisecond)
				select {
				case <-joined:
					t.Fatalf("the join reached the registry before %v", d)
				default:
				}
				require.Empty(t, mr.reg.Topology().Members)
				clk.Advance(time.Millisecond)
			}
			m = <-joined
			require.NotNil(t, m)
			start := clk.Now()
			assert.Equal(t, start, m.Lease().Renewed, "the join's grant is its own answer")
			for clk.Now().Sub(start) < 3*time.Second {
				clk.Advance(10 * time.Millisecond)
				l := m.Lease()
				now := clk.Now()
				age := now.Sub(l.Renewed)
				require.Equal(t, cluster.MembershipLeaseHeld, l.Status)
				require.Equal(t, lt.FencePeriod, l.Deadline.Sub(l.Renewed))
				if now.Sub(start) < d+lt.RenewInterval {
					continue // the join's grant may still be the newest answered
				}
				require.GreaterOrEqual(t, age, d, "at %v: a renewal answered before its latency", now.Sub(start))
				require.Less(t, age, d+lt.RenewInterval, "at %v", now.Sub(start))
			}
			require.NoError(t, m.Leave(context.Background()))
		})
	}
}

// A slow registry's views reach the member d after the registry published
// them, in order; Latest reports the newest that reached it. Without
// latency they pass at once.
func TestSlowRegistryDelaysViews(t *testing.T) {
	mr, clk := newFaultRegistry(t)
	other := &memberRegistry{reg: mr.reg, src: clk, local: newDriftClock(clk), latency: &atomic.Int64{}}
	a, err := mr.Join(context.Background(), faultMember("a"))
	require.NoError(t, err)
	first := <-a.Snapshots()
	require.Len(t, first.Members, 1)
	const d = 150 * time.Millisecond
	mr.latency.Store(int64(d))
	// held waits until a's forwarder holds n views (it takes each from the
	// registry's channel on its own goroutine, and times it from then).
	held := func(n int) {
		require.Eventually(t, func() bool {
			a.(*memberMembership).mu.Lock()
			defer a.(*memberMembership).mu.Unlock()
			return len(a.(*memberMembership).held) == n
		}, 5*time.Second, time.Millisecond)
	}
	b, err := other.Join(context.Background(), faultMember("b")) // a view of two
	require.NoError(t, err)
	held(1)
	clk.Advance(d / 2)
	c, err := other.Join(context.Background(), cluster.Member{ID: "c", Incarnation: 1, Address: "127.0.0.1:2"}) // of three
	require.NoError(t, err)
	held(2)
	clk.Advance(d/2 - time.Millisecond)
	select {
	case v := <-a.Snapshots():
		t.Fatalf("a view of %d reached the member before its latency", len(v.Members))
	default:
	}
	latest, _ := a.Latest()
	require.Len(t, latest.Members, 1, "Latest is the newest view that reached the member")
	clk.Advance(time.Millisecond)
	require.Len(t, (<-a.Snapshots()).Members, 2)
	latest, _ = a.Latest()
	require.Len(t, latest.Members, 2)
	clk.Advance(d / 2)
	require.Len(t, (<-a.Snapshots()).Members, 3)
	// b has no latency: its views came at once.
	require.Eventually(t, func() bool { v, _ := b.Latest(); return len(v.Members) == 3 }, 5*time.Second, time.Millisecond)
	for _, m := range []cluster.Membership{a, b, c} {
		require.NoError(t, m.Leave(context.Background()))
	}
	_, open := <-a.Snapshots()
	for open { // the views of the leaves, then closed
		_, open = <-a.Snapshots()
	}
}

// A drifted member's timer of d fires after d/rate of true time, and its
// Now moves rate times as fast from the change on, continuously.
func TestDriftClockTimersAndNow(t *testing.T) {
	for _, rate := range []float64{1.25, 0.8} {
		clk := scheduler.NewManualClock(time.Unix(0, 0))
		c := newDriftClock(clk)
		clk.Advance(time.Second)
		c.setRate(rate)
		require.Equal(t, time.Unix(1, 0), c.Now(), "the change keeps the time")
		fired := false
		c.AfterFunc(time.Second, func() { fired = true })
		want := time.Duration(float64(time.Second) / rate)
		clk.Advance(want - time.Millisecond)
		require.False(t, fired, "rate %v: fired before %v of true time", rate, want)
		clk.Advance(time.Millisecond)
		require.True(t, fired, "rate %v: not fired after %v of true time", rate, want)
		require.Equal(t, time.Unix(2, 0), c.Now(), "rate %v: local time moved by the timer's d", rate)
		// A later change starts from where the local time stands.
		c.setRate(1)
		clk.Advance(time.Second)
		require.Equal(t, time.Unix(3, 0), c.Now())
		require.Equal(t, time.Unix(1, 0).Add(500*time.Millisecond), c.localAt(time.Unix(1, 0).Add(time.Duration(float64(500*time.Millisecond)/rate))),
			"a past true time maps through the segment it fell in")
		for _, at := range []time.Time{time.Unix(0, 0), time.Unix(1, 0).Add(300 * time.Millisecond), clk.Now()} {
			require.Equal(t, at, c.trueAt(c.localAt(at)), "rate %v: trueAt inverts localAt at %v", rate, at)
		}
	}
}

// A rate change re-arms the pending timers: each fires when the local time
// reaches its deadline, at the new rate for what is left; a stopped timer
// stays stopped.
func TestDriftClockRateChangeReArmsTimers(t *testing.T) {
	clk := scheduler.NewManualClock(time.Unix(0, 0))
	c := newDriftClock(clk)
	var fired, stopped bool
	c.AfterFunc(time.Second, func() { fired = true })
	stop := c.AfterFunc(time.Second, func() { stopped = true })
	clk.Advance(500 * time.Millisecond)
	require.True(t, stop())
	c.setRate(2) // 500 ms of local time left: 250 ms of true time
	clk.Advance(249 * time.Millisecond)
	require.False(t, fired, "fired before its local deadline")
	clk.Advance(time.Millisecond)
	require.True(t, fired, "not fired at its local deadline")
	require.Equal(t, time.Unix(1, 0), c.Now())
	clk.Advance(time.Second)
	require.False(t, stopped)
	require.False(t, stop())
	require.Zero(t, clk.Pending(), "no timer left behind")
}

// A drifted member sees its lease in its own time: however far its clock
// ran ahead or behind, the lease it renews is valid at its Now, and ends
// F after the renewal on its clock (not on the registry's).
func TestDriftedMemberLeaseIsInLocalTime(t *testing.T) {
	for _, rate := range []float64{1.25, 0.8} {
		mr, clk := newFaultRegistry(t)
		m, err := mr.Join(context.Background(), faultMember("a"))
		require.NoError(t, err)
		mr.local.setRate(rate)
		lt := mr.reg.LeaseTiming()
		for range 200 { // 2 s: the offset grows to ±0.4 s, more than F − R
			clk.Advance(10 * time.Millisecond)
			now := mr.local.Now()
			l := m.Lease()
			require.True(t, l.Valid(now), "rate %v: the lease is not valid at the member's time %v (deadline %v)", rate, now, l.Deadline)
			require.Equal(t, lt.FencePeriod, l.Deadline.Sub(l.Renewed))
			require.LessOrEqual(t, now.Sub(l.Renewed), time.Duration(float64(lt.RenewInterval)*rate)+time.Millisecond,
				"rate %v: the renewal is at most R of true time old", rate)
		}
		require.NoError(t, m.Leave(context.Background()))
	}
}

// A delayed link delivers each write d after it on the clock, in order:
// bytes written after the delay was shortened or lifted still come after
// those held. Nothing held counts as in flight until it falls due.
func TestDelayedLinkDeliversLateInOrder(t *testing.T) {
	clk := scheduler.NewManualClock(time.Unix(0, 0))
	n := newFaultNet(remote.NewMemoryNetwork(), clk, time.Second)
	a, b := n.member(), n.member()
	ctx := context.Background()
	lnA, err := a.Listen(ctx, "127.0.0.1:0")
	require.NoError(t, err)
	defer lnA.Close()
	lnB, err := b.Listen(ctx, "127.0.0.1:0")
	require.NoError(t, err)
	defer lnB.Close()
	n.setDelay(a.addr(), b.addr(), 200*time.Millisecond)

	got := make(chan byte, 16)
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		c, err := lnB.Accept()
		if !assert.NoError(t, err) {
			return
		}
		defer c.Close()
		buf := make([]byte, 16)
		for {
			k, err := c.Read(buf)
			for _, x := range buf[:k] {
				got <- x
			}
			if err != nil {
				if err != io.EOF {
					assert.ErrorIs(t, err, io.ErrClosedPipe)
				}
				return
			}
		}
	}()
	conn, err := a.Dial(ctx, b.addr())
	require.NoError(t, err)
	fc := conn.(*faultConn)
	write := func(s string) {
		k, err := conn.Write([]byte(s))
		require.NoError(t, err)
		require.Equal(t, len(s), k, "a delayed write returns at once")
	}
	write("a") // due at 200 ms
	clk.Advance(50 * time.Millisecond)
	n.setDelay(a.addr(), b.addr(), 100*time.Millisecond)
	write("b") // due at 150 ms, after a: 200 ms
	n.setDelay(a.addr(), b.addr(), 0)
	write("c") // no delay, behind a and b
	clk.Advance(149 * time.Millisecond)
	require.Zero(t, fc.written.Load(), "nothing fell due before 200 ms")
	require.Zero(t, fc.releasing.Load())
	clk.Advance(time.Millisecond)
	require.Equal(t, "abc", string([]byte{<-got, <-got, <-got}))
	n.setDelay(a.addr(), b.addr(), 100*time.Millisecond)
	write("d")
	clk.Advance(99 * time.Millisecond)
	select {
	case x := <-got:
		t.Fatalf("%q arrived before its delay", x)
	default:
	}
	require.EqualValues(t, 3, fc.written.Load(), "d did not fall due before 100 ms")
	clk.Advance(time.Millisecond)
	require.Equal(t, byte('d'), <-got)
	require.NoError(t, conn.Close())
	<-readerDone
}
