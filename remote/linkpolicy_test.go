package remote

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// constRand always draws n-1 of Int64N(n): the jitter is at its maximum, so
// a wait is the whole exponential step.
type constRand struct{}

func (constRand) Int64N(n int64) int64 { return n - 1 }

// TestLinkPolicy drives the reconnect/give-up policy with made-up times.
func TestLinkPolicy(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	ms := time.Millisecond
	type step struct {
		do   string        // "lost", "fail", "connected", "refused" (by the dial budget), "dialing", or "" / "free" (just ask, for a dial the budget counts / does not count)
		at   time.Duration // since t0
		want linkAction
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"never connected: dial at once", []step{
			{"", 0, linkAction{kind: linkDial}},
		}},
		{"backoff doubles up to the maximum", []step{
			{"fail", 0, linkAction{kind: linkWait, wait: 100 * ms}},
			{"", 40 * ms, linkAction{kind: linkWait, wait: 60 * ms}},
			{"", 100 * ms, linkAction{kind: linkDial}},
			{"fail", 100 * ms, linkAction{kind: linkWait, wait: 200 * ms}},
			{"fail", 300 * ms, linkAction{kind: linkWait, wait: 400 * ms}},
			{"fail", 700 * ms, linkAction{kind: linkWait, wait: 500 * ms}}, // capped
			{"fail", 1200 * ms, linkAction{kind: linkWait, wait: 500 * ms}},
		}},
		{"lost connection: redial at once, give up counted from the loss", []step{
			{"lost", 0, linkAction{kind: linkDial}},
			{"fail", 10 * ms, linkAction{kind: linkWait, wait: 100 * ms}},
			{"fail", 110 * ms, linkAction{kind: linkWait, wait: 200 * ms}},
			{"fail", 2900 * ms, linkAction{kind: linkWait, wait: 100 * ms}}, // the wait stops at give-up
			{"", 3 * time.Second, linkAction{kind: linkGiveUp, down: 3 * time.Second}},
		}},
		{"give up counted from the first failure of a peer never reached", []step{
			{"fail", time.Second, linkAction{kind: linkWait, wait: 100 * ms}},
			{"", 3999 * ms, linkAction{kind: linkDial}},
			{"", 4 * time.Second, linkAction{kind: linkGiveUp, down: 3 * time.Second}},
		}},
		{"a connection resets everything", []step{
			{"fail", 0, linkAction{kind: linkWait, wait: 100 * ms}},
			{"fail", 100 * ms, linkAction{kind: linkWait, wait: 200 * ms}},
			{"connected", 300 * ms, linkAction{kind: linkDial}},
			{"lost", 10 * time.Second, linkAction{kind: linkDial}},
			{"fail", 10 * time.Second, linkAction{kind: linkWait, wait: 100 * ms}},
			{"", 12999 * ms, linkAction{kind: linkDial}},
			{"", 13 * time.Second, linkAction{kind: linkGiveUp, down: 3 * time.Second}},
		}},
		{"connections lost soon after they were made: from the second in a row on, the redial waits", []step{
			{"connected", 0, linkAction{kind: linkDial}},
			{"lost", 10 * ms, linkAction{kind: linkDial}},
			{"connected", 10 * ms, linkAction{kind: linkDial}},
			{"lost", 20 * ms, linkAction{kind: linkWait, wait: 100 * ms}},
			{"connected", 120 * ms, linkAction{kind: linkDial}},
			{"lost", 130 * ms, linkAction{kind: linkWait, wait: 200 * ms}},
			{"fail", 330 * ms, linkAction{kind: linkWait, wait: 100 * ms}}, // a failed dial backs off on its own count
			{"connected", 430 * ms, linkAction{kind: linkDial}},
			{"lost", 440 * ms, linkAction{kind: linkWait, wait: 400 * ms}},
			// One that lasted backoffMax ends the run of flaps.
			{"connected", 840 * ms, linkAction{kind: linkDial}},
			{"lost", 1340 * ms, linkAction{kind: linkDial}},
			{"connected", 1340 * ms, linkAction{kind: linkDial}},
			{"lost", 1350 * ms, linkAction{kind: linkDial}},
		}},
		{"a dial the budget refused waits for its backoff slot; an unbudgeted one does not", []step{
			{"refused", 0, linkAction{kind: linkWait, wait: 100 * ms}},
			{"", 50 * ms, linkAction{kind: linkWait, wait: 50 * ms}},
			{"free", 50 * ms, linkAction{kind: linkDial}},
			{"refused", 100 * ms, linkAction{kind: linkWait, wait: 200 * ms}},
			{"dialing", 300 * ms, linkAction{kind: linkDial}},
			{"fail", 310 * ms, linkAction{kind: linkWait, wait: 100 * ms}}, // the refusals do not count as failures
			{"refused", 410 * ms, linkAction{kind: linkWait, wait: 100 * ms}},
		}},
		{"refused dials give up as failed ones do", []step{
			{"refused", 0, linkAction{kind: linkWait, wait: 100 * ms}},
			{"refused", 2900 * ms, linkAction{kind: linkWait, wait: 100 * ms}}, // the wait stops at give-up
			{"", 3 * time.Second, linkAction{kind: linkGiveUp, down: 3 * time.Second}},
		}},
		{"a connection ends the refusals", []step{
			{"refused", 0, linkAction{kind: linkWait, wait: 100 * ms}},
			{"refused", 100 * ms, linkAction{kind: linkWait, wait: 200 * ms}},
			{"connected", 150 * ms, linkAction{kind: linkDial}},
			{"lost", 10 * time.Second, linkAction{kind: linkDial}},
			{"refused", 10 * time.Second, linkAction{kind: linkWait, wait: 100 * ms}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := linkPolicy{backoffMin: 100 * ms, backoffMax: 500 * ms, giveUpAfter: 3 * time.Second, rand: constRand{}}
			for i, s := range tt.steps {
				now := at(s.at)
				switch s.do {
				case "lost":
					p.lost(now)
				case "fail":
					p.dialFailed(now)
				case "connected":
					p.connected(now)
				case "refused":
					p.budgetRefused(now)
				case "dialing":
					p.dialing()
				}
				assert.Equal(t, s.want, p.next(now, s.do != "free"), "step %d (%s at %v)", i, s.do, s.at)
			}
		})
	}
}

// TestLinkPolicySeedReplays: two policies with one seed wait the same
// jittered times; the waits stay within [step/2, step].
func TestLinkPolicySeedReplays(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	waits := func(seed uint64) []time.Duration {
		p := linkPolicy{backoffMin: 100 * time.Millisecond, backoffMax: 5 * time.Second, giveUpAfter: time.Hour,
			rand: rand.New(rand.NewPCG(seed, seed))}
		now := t0
		var out []time.Duration
		for range 10 {
			p.dialFailed(now)
			a := p.next(now, true)
			require.Equal(t, linkWait, a.kind)
			out = append(out, a.wait)
			now = now.Add(a.wait)
		}
		return out
	}
	a := waits(7)
	assert.Equal(t, a, waits(7))
	assert.NotEqual(t, a, waits(8))
	for i, w := range a {
		step := min(100*time.Millisecond<<i, 5*time.Second)
		assert.GreaterOrEqual(t, w, step/2)
		assert.LessOrEqual(t, w, step)
	}
}

func TestHeartbeatPolicy(t *testing.T) {
	var h heartbeatPolicy
	assert.True(t, h.tick(), "idle interval: ping")
	h.written()
	assert.False(t, h.tick(), "a frame was written: no ping")
	assert.True(t, h.tick(), "idle again: ping")
}
