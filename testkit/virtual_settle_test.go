package testkit_test

import (
	"encoding/json"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// stallMsg is a message whose JSON encoding (on the sender's remote
// writer, Where "encode") or decoding (on the receiver's reader, Where
// "decode") waits at the gate named Gate until the test releases it: an
// envelope held in one stage of its way between two members.
type stallMsg struct {
	Gate  string `json:"gate"`
	Where string `json:"where"`
}

// stallGate is a place where a stallMsg waits: reached is closed when one
// gets there, release lets it go on.
type stallGate struct {
	once             sync.Once
	reached, release chan struct{}
}

var stallGates sync.Map // name → *stallGate

func newStallGate(t *testing.T, name string) *stallGate {
	g := &stallGate{reached: make(chan struct{}), release: make(chan struct{})}
	stallGates.Store(name, g)
	t.Cleanup(func() {
		stallGates.Delete(name)
		select {
		case <-g.release:
		default:
			close(g.release)
		}
	})
	return g
}

func (m *stallMsg) stall(where string) {
	if m.Where != where {
		return
	}
	if v, ok := stallGates.Load(m.Gate); ok {
		g := v.(*stallGate)
		g.once.Do(func() { close(g.reached) })
		<-g.release
	}
}

func (m *stallMsg) MarshalJSON() ([]byte, error) {
	m.stall("encode")
	type plain stallMsg
	return json.Marshal((*plain)(m))
}

func (m *stallMsg) UnmarshalJSON(b []byte) error {
	type plain stallMsg
	if err := json.Unmarshal(b, (*plain)(m)); err != nil {
		return err
	}
	m.stall("decode")
	return nil
}

func stallMessages(s *remote.Serializers) error { return remote.RegisterJSON[*stallMsg](s, "tk.stall") }

// stallCluster starts a two-member VirtualTime cluster and an actor on
// member 1 that passes on the stallMsgs it receives; a first message
// sets up the connection from member 0, and the clock moves past what
// setting it up counts as trouble (mayHold).
func stallCluster(t *testing.T, opts ...testkit.ClusterOption) (*testkit.TestCluster, *actor.PID, chan *stallMsg) {
	opts = append([]testkit.ClusterOption{testkit.Nodes(2), testkit.VirtualTime(), testkit.Serializers(stallMessages)}, opts...)
	tc := testkit.NewCluster(t, opts...)
	got := make(chan *stallMsg, 16)
	local := tc.System(1).Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*stallMsg); ok {
			got <- m
		}
	}))
	// member 0's own PID value: one shared with member 1 would resolve
	// to member 1's actor in-process, not through remote (actor.PID)
	pid := actor.NewPID(local.Address, local.ID)
	tc.System(0).Root().Send(pid, &stallMsg{Gate: "warm-up"})
	awaitChan(t, got, "the warm-up message")
	tc.Advance(time.Second)
	testkit.Eventually(t, tc.IdleForTest, testkit.DefaultTimeout, "the cluster is idle after the warm-up")
	return tc, pid, got
}

func awaitChan[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testkit.DefaultTimeout):
		t.Fatalf("%s did not come within %v", what, testkit.DefaultTimeout)
		var zero T
		return zero
	}
}

// TestVirtualSettleWaitsForTheWire: an envelope on its way from one member
// to another keeps a VirtualTime cluster from being idle (what settle
// waits for before the clock moves on) while its sender's remote writer
// encodes it (it is in the sender's remote queue, and no worker is busy)
// and while the receiver's reader decodes it (the reader was given its
// bytes and has not delivered it); the cluster is idle again once it was
// handled. Over TCP the stalled reader holds up nothing else (the kernel
// takes what follows), so only the wire's counts see it; over the
// in-memory pipes the writer behind it waits too. Before, settle looked
// at the members' worker pools only and found the cluster idle in all
// cases: the clock ran ahead of envelopes in flight (the first grain call
// of TestVirtualClusterConvergesCallsAndRecovers timed out under load).
func TestVirtualSettleWaitsForTheWire(t *testing.T) {
	for _, tr := range []string{"memory", "tcp"} {
		for _, where := range []string{"encode", "decode"} {
			t.Run(tr+"/"+where, func(t *testing.T) {
				var opts []testkit.ClusterOption
				if tr == "tcp" {
					opts = append(opts, testkit.TCP())
				}
				settleStage(t, where, opts...)
			})
		}
	}
}

func settleStage(t *testing.T, where string, opts ...testkit.ClusterOption) {
	tc, pid, got := stallCluster(t, opts...)
	g := newStallGate(t, where)
	tc.System(0).Root().Send(pid, &stallMsg{Gate: where, Where: where})
	awaitChan(t, g.reached, "the "+where)
	require.False(t, tc.IdleForTest(), "idle while the envelope's %s waits", where)
	close(g.release)
	awaitChan(t, got, "the stalled message")
	testkit.Eventually(t, tc.IdleForTest, testkit.DefaultTimeout, "the cluster is idle once the message was handled")
}

// TestVirtualSettleDoesNotWaitForFaults: what a fault holds is not in
// flight, so the clock does not wait for it at every step: an envelope a
// partition holds (its write, then the queue behind it), and envelopes
// queued for a killed member until remote gives up on it. If settle
// waited for them, each 20 ms step of the clock would wait settleWait:
// here most of them would.
func TestVirtualSettleDoesNotWaitForFaults(t *testing.T) {
	for _, fault := range []string{"partition", "kill"} {
		t.Run(fault, func(t *testing.T) {
			tc, pid, got := stallCluster(t)
			switch fault {
			case "partition":
				tc.Partition(0, 1)
			case "kill":
				tc.Kill(1)
			}
			settles0, timeouts0 := tc.SettlesForTest()
			start := tc.Now()
			for k := range 10 {
				tc.System(0).Root().Send(pid, &stallMsg{Gate: "held"})
				tc.Eventually(func() bool { return tc.Now().Sub(start) >= time.Duration(k+1)*300*time.Millisecond },
					time.Second, "300 ms of virtual time pass")
			}
			settles, timeouts := tc.SettlesForTest()
			settles, timeouts = settles-settles0, timeouts-timeouts0
			t.Logf("%s: %d of %d settles waited %v", fault, timeouts, settles, 20*time.Millisecond)
			require.Less(t, 2*timeouts, settles, "most steps wait for what the %s holds", fault)
			if fault == "partition" {
				require.Empty(t, got)
				tc.Heal(0, 1)
				for range 10 {
					tc.Eventually(func() bool { return len(got) > 0 }, 5*time.Second, "the held messages arrive after the heal")
					<-got
				}
			}
		})
	}
}

// TestVirtualSettleWaitsForRunnableGoroutines: a goroutine that is no
// member's worker and touches no connection (as the one behind a cluster
// request, which resolves the grain and waits for its reply) holds the
// clock while it is ready to run: while one yields 100,000 times before
// it sets a flag, the clock moves only when a settle gave up waiting
// (after 20 ms of wall time), not at every step. Before, settle did not
// see it: the clock ran 0.9 to 2.2 s of virtual time ahead while the
// goroutine yielded, no settle waiting (and the first grain call of
// TestVirtualClusterConvergesCallsAndRecovers was answered after 20 to
// 100 ms of virtual time under load, not at once: its request's goroutine
// lagged behind the clock).
func TestVirtualSettleWaitsForRunnableGoroutines(t *testing.T) {
	tc := testkit.NewCluster(t, testkit.Nodes(1), testkit.VirtualTime())
	var flag atomic.Bool
	finished := make(chan struct{})
	start := tc.Now()
	_, timeouts0 := tc.SettlesForTest()
	go func() {
		defer close(finished)
		for range 100_000 {
			runtime.Gosched()
		}
		flag.Store(true)
	}()
	tc.Eventually(flag.Load, 5*time.Second, "the yielding goroutine is done")
	<-finished
	_, timeouts := tc.SettlesForTest()
	timeouts -= timeouts0
	took := tc.Now().Sub(start)
	t.Logf("done after %v of virtual time; %d settles waited 20 ms", took, timeouts)
	require.LessOrEqual(t, took, time.Duration(timeouts)*20*time.Millisecond,
		"the clock moved while the goroutine was ready to run and settle had not given up")
}
