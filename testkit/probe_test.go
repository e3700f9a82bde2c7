package testkit_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

type order struct{ ID int }

// bothModes runs f on a real system and on a deterministic one.
func bothModes(t *testing.T, f func(t *testing.T, sys *actor.System)) {
	t.Run("real", func(t *testing.T) { f(t, testkit.NewSystem(t)) })
	t.Run("manual", func(t *testing.T) { f(t, testkit.NewManualSystem(t).System) })
}

// Every expectation, passing and failing, in both modes. A failure must
// name what arrived instead: its type and its value.
func TestProbeExpectations(t *testing.T) {
	cases := []struct {
		name   string
		send   []any
		expect func(t *testing.T, p *testkit.Probe)
		want   []string // substrings of the one failure; nil: it passes
	}{
		{"ExpectMsg passes", []any{"hi"}, func(t *testing.T, p *testkit.Probe) {
			assert.Equal(t, "hi", testkit.ExpectMsg[string](p, 0))
		}, nil},
		{"ExpectMsg pointer type passes", []any{&order{ID: 7}}, func(t *testing.T, p *testkit.Probe) {
			assert.Equal(t, 7, testkit.ExpectMsg[*order](p, 0).ID)
		}, nil},
		{"ExpectMsg names the wrong type and value", []any{&order{ID: 7}}, func(t *testing.T, p *testkit.Probe) {
			assert.Empty(t, testkit.ExpectMsg[string](p, 0))
		}, []string{"ExpectMsg[string]: got *testkit_test.order &{ID:7} instead"}},
		{"ExpectMsg with nothing", nil, func(t *testing.T, p *testkit.Probe) {
			testkit.ExpectMsg[string](p, 20*time.Millisecond)
		}, []string{"ExpectMsg[string]: got no message within 20ms"}},
		{"ExpectMsgEqual passes (deep)", []any{&order{ID: 1}}, func(t *testing.T, p *testkit.Probe) {
			p.ExpectMsgEqual(&order{ID: 1}, 0)
		}, nil},
		{"ExpectMsgEqual names the int that arrived", []any{42}, func(t *testing.T, p *testkit.Probe) {
			p.ExpectMsgEqual(41, 0)
		}, []string{"ExpectMsgEqual(int 41): got int 42 instead"}},
		{"ExpectMsgEqual names the string that arrived", []any{"b"}, func(t *testing.T, p *testkit.Probe) {
			p.ExpectMsgEqual("a", 0)
		}, []string{`ExpectMsgEqual(string "a"): got string "b" instead`}},
		{"ExpectMsgEqual with nothing", nil, func(t *testing.T, p *testkit.Probe) {
			p.ExpectMsgEqual("a", 20*time.Millisecond)
		}, []string{`ExpectMsgEqual(string "a"): got no message within 20ms`}},
		{"ExpectNoMsg passes", nil, func(t *testing.T, p *testkit.Probe) {
			p.ExpectNoMsg(10 * time.Millisecond)
		}, nil},
		{"ExpectNoMsg names what arrived", []any{"late"}, func(t *testing.T, p *testkit.Probe) {
			p.ExpectNoMsg(10 * time.Millisecond)
		}, []string{`ExpectNoMsg: got string "late" within 10ms`}},
		{"FishForMsg skips to the match", []any{1, "a", 2, 3}, func(t *testing.T, p *testkit.Probe) {
			assert.Equal(t, 2, testkit.FishForMsg(p, func(i int) bool { return i >= 2 }, 0))
			p.ExpectMsgEqual(3, 0)
		}, nil},
		{"FishForMsg nil pred takes the first T", []any{"a", &order{ID: 2}}, func(t *testing.T, p *testkit.Probe) {
			assert.Equal(t, 2, testkit.FishForMsg[*order](p, nil, 0).ID)
		}, nil},
		{"FishForMsg lists what it skipped", []any{1, "a"}, func(t *testing.T, p *testkit.Probe) {
			testkit.FishForMsg(p, func(i int) bool { return i > 5 }, 20*time.Millisecond)
		}, []string{"FishForMsg[int]: no match within 20ms", `skipped [int 1; string "a"]`}},
		{"ExpectTerminated names the other message", []any{"x"}, func(t *testing.T, p *testkit.Probe) {
			assert.Nil(t, p.ExpectTerminated(actor.NewPID(actor.LocalAddress, "w"), 0))
		}, []string{`ExpectTerminated(local/w): got string "x" instead`}},
		{"ExpectTerminated of another PID", []any{&actor.Terminated{Who: actor.NewPID(actor.LocalAddress, "v")}}, func(t *testing.T, p *testkit.Probe) {
			p.ExpectTerminated(actor.NewPID(actor.LocalAddress, "w"), 0)
		}, []string{"ExpectTerminated(local/w): got the Terminated of local/v (Stopped) instead"}},
		{"ExpectTerminated with nothing", nil, func(t *testing.T, p *testkit.Probe) {
			assert.Nil(t, p.ExpectTerminated(actor.NewPID(actor.LocalAddress, "w"), 20*time.Millisecond))
		}, []string{"ExpectTerminated(local/w): got no message within 20ms"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bothModes(t, func(t *testing.T, sys *actor.System) {
				rec := newRecorder(t)
				p := testkit.NewProbe(rec, sys)
				for _, m := range tc.send {
					sys.Root().Send(p.PID(), m)
				}
				tc.expect(t, p)
				if tc.want == nil {
					assert.Empty(t, rec.Fatals())
					return
				}
				require.Len(t, rec.Fatals(), 1, "one failure")
				for _, w := range tc.want {
					assert.Contains(t, rec.lastFatal(), w)
				}
				assert.Contains(t, rec.lastFatal(), "testkit: probe "+p.PID().String())
			})
		})
	}
}

// A failure names the sender of what arrived, and the wait is named for
// what it was: wall time, or virtual time in deterministic mode.
func TestProbeFailureNamesSenderAndWait(t *testing.T) {
	t.Run("real", func(t *testing.T) {
		sys := testkit.NewSystem(t)
		rec := newRecorder(t)
		p := testkit.NewProbe(rec, sys)
		other := testkit.NewProbe(t, sys)
		other.Send(p.PID(), 42)
		testkit.ExpectMsg[string](p, 0)
		assert.Contains(t, rec.lastFatal(), "got int 42 from "+other.PID().String()+" instead")
		testkit.ExpectMsg[string](p, 5*time.Millisecond)
		assert.Regexp(t, `got no message within 5ms$`, rec.lastFatal())
	})
	t.Run("manual", func(t *testing.T) {
		sys := testkit.NewManualSystem(t)
		rec := newRecorder(t)
		p := testkit.NewProbe(rec, sys.System)
		testkit.ExpectMsg[string](p, 0)
		assert.Contains(t, rec.lastFatal(), "got no message by the time the system was idle (virtual time 0s; timeout 0 does not move the clock)")
		testkit.ExpectMsg[string](p, 5*time.Millisecond)
		assert.Contains(t, rec.lastFatal(), "got no message within 5ms of virtual time (now 5ms)")
	})
}

// Sender is the sender of the last message taken; Reply answers it.
func TestProbeSenderAndReply(t *testing.T) {
	bothModes(t, func(t *testing.T, sys *actor.System) {
		p := testkit.NewProbe(t, sys)
		f := sys.Root().RequestFuture(p.PID(), "ping", 0)
		p.ExpectMsgEqual("ping", 0)
		assert.True(t, p.Sender().Equal(f.PID()))
		assert.Equal(t, "ping", p.Last().Msg)
		p.Reply("pong")
		if m, ok := sys.Dispatcher().(interface{ RunUntilIdle() int }); ok {
			m.RunUntilIdle()
		}
		got, err := f.Result()
		require.NoError(t, err)
		assert.Equal(t, "pong", got)

		// Send makes the probe the sender, so Respond comes back to it.
		echo := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
			if s, ok := c.Message().(string); ok {
				c.Respond(s + "!")
			}
		}))
		p.Send(echo, "hi")
		p.ExpectMsgEqual("hi!", 0)
		assert.True(t, p.Sender().Equal(echo))
	})
}

func TestProbeReplyWithoutSender(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	rec := newRecorder(t)
	p := testkit.NewProbe(rec, sys.System)
	sys.Root().Send(p.PID(), &order{ID: 3})
	testkit.ExpectMsg[*order](p, 0)
	assert.Nil(t, p.Sender())
	p.Reply("answer")
	assert.Contains(t, rec.lastFatal(), `Reply(string "answer"): the last message taken (*testkit_test.order &{ID:3}) had no sender`)
}

func TestProbeWatch(t *testing.T) {
	bothModes(t, func(t *testing.T, sys *actor.System) {
		p := testkit.NewProbe(t, sys)
		pid := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
		p.Watch(pid)
		sys.Root().Stop(pid)
		term := p.ExpectTerminated(pid, 0)
		require.NotNil(t, term)
		assert.Equal(t, actor.TerminatedStopped, term.Why)

		ghost := actor.NewPID(actor.LocalAddress, "ghost")
		p.Watch(ghost)
		assert.Equal(t, actor.TerminatedNotFound, p.ExpectTerminated(ghost, 0).Why)

		other := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
		p.Watch(other)
		p.Unwatch(other)
		sys.Root().Stop(other)
		p.ExpectNoMsg(20 * time.Millisecond)
	})
}

// The probe's queue is unbounded: thousands of messages from concurrent
// senders all arrive, each sender's in order.
func TestProbeNeverDrops(t *testing.T) {
	const senders, each = 4, 2500
	bothModes(t, func(t *testing.T, sys *actor.System) {
		p := testkit.NewProbe(t, sys)
		var wg sync.WaitGroup
		for s := range senders {
			wg.Go(func() {
				for i := range each {
					sys.Root().Send(p.PID(), [2]int{s, i})
				}
			})
		}
		wg.Wait()
		next := make([]int, senders)
		for range senders * each {
			m := testkit.ExpectMsg[[2]int](p, 0)
			require.Equal(t, next[m[0]], m[1], "sender %d out of order", m[0])
			next[m[0]]++
		}
		p.ExpectNoMsg(0)
		assert.Equal(t, 0, p.Len())
	})
}

func TestNewProbeOnStoppedSystem(t *testing.T) {
	sys := testkit.NewSystem(t)
	require.NoError(t, sys.Shutdown(t.Context()))
	rec := newRecorder(t)
	testkit.NewProbe(rec, sys)
	assert.Contains(t, rec.lastFatal(), "testkit: NewProbe: actor: system stopped")
}
