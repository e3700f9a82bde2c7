package testkit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

func done(f *actor.Future) func() bool { return func() bool { return isDone(f) } }

// TestVirtualClusterConvergesCallsAndRecovers: a VirtualTime cluster is a
// converged cluster when NewCluster returns (it moves the virtual clock
// itself while it waits); a grain call completes; after the grain's
// member is killed, Eventually moves the clock through the lease expiry
// and the wait-out until the call is answered elsewhere, and
// AwaitConverged until the survivors agree. Nothing here moves the clock
// by hand.
func TestVirtualClusterConvergesCallsAndRecovers(t *testing.T) {
	tc := testkit.NewCluster(t, testkit.Nodes(3), testkit.VirtualTime(),
		testkit.Kinds(plainCounter()), testkit.Serializers(counterMessages))
	require.Len(t, tc.Node(0).Members(), 3)
	require.Equal(t, cluster.StatusReady, tc.Node(2).Status())
	t.Logf("converged at %v of virtual time", tc.Now().Sub(time.Unix(0, 0)))

	id := cluster.NewIdentity("counter", "42")
	f := tc.Node(0).RequestFuture(id, &whoReq{}, 0)
	called := tc.Now()
	// Answered at once (no virtual time passes while the cluster
	// settles), or a few hundred ms late when the members' goroutines lag
	// under load. Before the in-memory registry's founder knew it founded
	// the cluster (TestMemoryFounderFoundedItsCluster), the owner waited out
	// W (612 ms) in about half the runs and the call was answered at a
	// retry after it, up to some 1.55 s.
	tc.Eventually(done(f), time.Second, "the first call is answered")
	t.Logf("the first call was answered after %v of virtual time", tc.Now().Sub(called))
	res, err := f.Result()
	require.NoError(t, err)
	host := res.(*whereIs).Member

	killed := -1
	for i := range tc.Len() {
		if tc.Address(i) == host {
			killed = i
		}
	}
	require.NotEqual(t, -1, killed)
	tc.Kill(killed)
	survivor := tc.Up()[0]
	killedAt := tc.Now()
	tc.Eventually(func() bool { return len(tc.Node(survivor).Members()) == 2 }, 5*time.Second,
		"member %d drops the killed member %d", survivor, killed)
	// The registry drops the killed member when its lease expires, not before.
	require.GreaterOrEqual(t, tc.Now().Sub(killedAt), testkit.VirtualRegistry().LeaseTTL-testkit.VirtualRegistry().RenewInterval)
	require.NoError(t, tc.AwaitConverged(t.Context()))

	t.Logf("the survivors agree %v after the kill", tc.Now().Sub(killedAt))

	var again *whereIs
	f = nil
	tc.Eventually(func() bool {
		if f == nil {
			f = tc.Node(survivor).RequestFuture(id, &whoReq{}, 0)
		}
		if !done(f)() {
			return false
		}
		r, err := f.Result()
		if err != nil {
			t.Logf("%v after the kill: %v", tc.Now().Sub(killedAt), err)
			f = nil // the next try
			return false
		}
		again = r.(*whereIs)
		return true
	}, 5*time.Second, "the grain is answered again after the kill")
	t.Logf("answered again %v after the kill", tc.Now().Sub(killedAt))
	require.NotEqual(t, host, again.Member)
	tc.Observer().AssertNoOverlap(t)
}

// TestVirtualEventuallyNamesTheCondition: a condition that never holds
// fails the test once its virtual budget has passed, naming the
// condition; the clock stands at the budget's end.
func TestVirtualEventuallyNamesTheCondition(t *testing.T) {
	rec := newRecorder(t)
	tc := testkit.NewCluster(rec, testkit.Nodes(1), testkit.VirtualTime())
	start := tc.Now()
	require.False(t, tc.Eventually(func() bool { return false }, 3*time.Second, "the moon is %s", "blue"))
	require.Equal(t, "testkit: Eventually: condition not met after 3s of virtual time: the moon is blue", rec.lastFatal())
	require.Equal(t, 3*time.Second, tc.Now().Sub(start))

	// On the system clock the budget is wall time.
	rec = newRecorder(t)
	tc = testkit.NewCluster(rec, testkit.Nodes(1))
	require.False(t, tc.Eventually(func() bool { return false }, 20*time.Millisecond, "never"))
	require.Equal(t, "testkit: Eventually: condition not met within 20ms: never", rec.lastFatal())
}

// TestVirtualClusterHeartbeatTimeoutIsLong: under VirtualTime a member's
// remote read deadline, which is wall time, is far longer than the
// system-clock setting, since the pings that meet it go out on the
// virtual clock; ConfigureRemote still has the last word. With the
// second of the system-clock setting, two idle members of a VirtualTime
// cluster lost their connection ("nothing received for 1s (heartbeat
// timeout)") after a second of wall time in which the test did not move
// the clock.
func TestVirtualClusterHeartbeatTimeoutIsLong(t *testing.T) {
	if got := testkit.MemberRemoteConfigForTest().HeartbeatTimeout; got != time.Second {
		t.Fatalf("system clock: HeartbeatTimeout %v, want 1s", got)
	}
	if got := testkit.MemberRemoteConfigForTest(testkit.VirtualTime()).HeartbeatTimeout; got < time.Minute {
		t.Fatalf("VirtualTime: HeartbeatTimeout %v, want at least a minute of wall time", got)
	}
	short := testkit.ConfigureRemote(func(c *remote.Config) { c.HeartbeatTimeout = 2 * time.Second })
	if got := testkit.MemberRemoteConfigForTest(testkit.VirtualTime(), short).HeartbeatTimeout; got != 2*time.Second {
		t.Fatalf("VirtualTime with ConfigureRemote: HeartbeatTimeout %v, want 2s", got)
	}
}
