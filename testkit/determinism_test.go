package testkit_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

type (
	work    struct{ N int }
	spawned struct{ Child *actor.PID }
)

// supervisedWorker keeps children (respawned with every fresh instance),
// reports its lifecycle and idleness (receive timeout 250 ms) to p,
// forwards work to its children and panics on *boom.
func supervisedWorker(p *testkit.Probe, children int) *actor.Props {
	child := actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *work:
			c.Send(p.PID(), fmt.Sprintf("%s did %d", c.Self().ID, m.N))
		case *actor.Stopped:
			c.Send(p.PID(), c.Self().ID+" stopped")
		}
	})
	return actor.PropsFromProducer(func() actor.Actor {
		var kids []*actor.PID
		return actor.ReceiveFunc(func(c actor.Context) {
			switch m := c.Message().(type) {
			case *actor.Started:
				for range children {
					kid := c.Spawn(child)
					kids = append(kids, kid)
					c.Send(p.PID(), &spawned{Child: kid})
				}
				c.SetReceiveTimeout(250 * time.Millisecond)
			case *actor.Restarting:
				c.Send(p.PID(), "restarting")
			case *actor.ReceiveTimeout:
				c.Send(p.PID(), "idle")
			case *work:
				for _, k := range kids {
					c.Send(k, m)
				}
			case *boom:
				panic("boom")
			}
		})
	})
}

// supervisionScenario runs a supervision + backoff scenario in
// deterministic mode, with ExponentialBackoff as the guardian strategy, and
// returns its full trace (shutdown included) and every message the probe
// saw, stamped with the virtual time it arrived at.
func supervisionScenario(t *testing.T, children int) (trace, seen []string) {
	sys := testkit.NewManualSystem(t, testkit.WithGuardianStrategy(actor.ExponentialBackoff()))
	p := testkit.NewManualProbe(t, sys)
	record := func(r testkit.Received) string {
		line := fmt.Sprintf("%v %s", sys.Elapsed(), r)
		seen = append(seen, line)
		return line
	}
	// collect takes what arrives until virtual time `until`.
	collect := func(until time.Duration) {
		for {
			r, ok := p.Receive(max(until-sys.Elapsed(), 0))
			if !ok {
				return
			}
			record(r)
		}
	}
	// awaitLine takes messages until one contains want.
	awaitLine := func(want string) {
		for {
			r, ok := p.Receive(time.Minute)
			require.True(t, ok, "no %q within a virtual minute", want)
			if strings.Contains(record(r), want) {
				return
			}
		}
	}

	w := sys.Root().Spawn(supervisedWorker(p, children))
	p.Watch(w)
	sys.Root().Send(w, &work{N: 1})
	sys.Root().Send(w, &boom{})     // fails: restart after 100 ms
	sys.Root().Send(w, &work{N: 2}) // queued while the worker is suspended
	sys.Root().Send(w, &boom{})     // fails after a success: 100 ms again
	sys.Root().Send(w, &work{N: 3}) // runs after the second restart
	collect(500 * time.Millisecond) // restarts at 100 and 200 ms, idle at 450 ms
	for range 3 {                   // a crash loop: restarts after 100, 200, 400 ms
		sys.Root().Send(w, &boom{})
		awaitLine("spawned")
	}
	sys.Root().Send(w, &work{N: 4})
	collect(sys.Elapsed() + time.Second) // then idle every 250 ms
	sys.Root().Poison(w)
	collect(sys.Elapsed())
	require.NoError(t, sys.Shutdown(t.Context()))
	collect(sys.Elapsed())
	return sys.TraceStrings(), seen
}

// linesWith returns the lines of seen that contain s.
func linesWith(seen []string, s string) []string {
	var out []string
	for _, l := range seen {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}

// The same supervision + backoff scenario, run 100 times in fresh
// deterministic systems, gives the same trace (every invocation, its actor
// and result, at its virtual time), the same PIDs and the same probe-seen
// messages at the same virtual times (S6 backoff under ExponentialBackoff).
func TestDeterministicSupervisionBackoff(t *testing.T) {
	// The scenario with one child does what it says, at the virtual times S6 gives.
	var seen, tr []string
	t.Run("golden", func(t *testing.T) { tr, seen = supervisionScenario(t, 1) })
	require.False(t, t.Failed())
	assert.Equal(t, []string{
		`100ms string "restarting"`,
		`200ms string "restarting"`,
		`600ms string "restarting"`, // failure at 500 ms: count reset by work 3
		`800ms string "restarting"`, // second consecutive: 200 ms
		`1.2s string "restarting"`,  // third consecutive: 400 ms
	}, linesWith(seen, "restarting"))
	assert.Equal(t, []string{
		`450ms string "idle"`,
		`1.45s string "idle"`, `1.7s string "idle"`,
		`1.95s string "idle"`, `2.2s string "idle"`,
	}, linesWith(seen, "idle"))
	assert.Equal(t, []string{
		`0s string "#5/$3 did 1"`,
		`100ms string "#5/$4 did 2"`,
		`200ms string "#5/$5 did 3"`,
		`1.2s string "#5/$8 did 4"`,
	}, linesWith(seen, " did "))
	assert.Equal(t, "2.2s *actor.Terminated &{Who:local/$2 Why:Stopped}", seen[len(seen)-1])
	assert.Greater(t, len(tr), 50)
	assert.Contains(t, tr, "500ms $2 Failed{actor: panic in Receive: boom, RetryAfter:100ms}")

	// With three children per worker instance, 100 fresh systems give the
	// same trace and the same probe-seen messages: children stop and
	// restart in spawn order (with a Go map this differed in 44 of 49 runs).
	const runs = 100
	var firstTrace, firstSeen []string
	for i := range runs {
		var tr, seen []string
		t.Run(fmt.Sprintf("run%03d", i), func(t *testing.T) { tr, seen = supervisionScenario(t, 3) })
		require.False(t, t.Failed())
		if i == 0 {
			firstTrace, firstSeen = tr, seen
			require.Len(t, linesWith(seen, " did "), 12, "three children per instance")
			continue
		}
		require.Equal(t, firstTrace, tr, "run %d: the trace differs from run 0", i)
		require.Equal(t, firstSeen, seen, "run %d: the probe saw something else than in run 0", i)
	}
}

// watchManyScenario: an actor that watches 20 others stops; it returns the
// trace of the stop.
func watchManyScenario(t *testing.T) []string {
	sys := testkit.NewManualSystem(t)
	var targets []*actor.PID
	for range 20 {
		targets = append(targets, sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {})))
	}
	watcher := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			for _, p := range targets {
				c.Watch(p)
			}
		}
	}))
	sys.RunUntilIdle()
	sys.ResetTrace()
	sys.Root().Stop(watcher)
	sys.RunUntilIdle()
	return sys.TraceStrings()
}

// TestStopOfWatcherOfManyIsDeterministic: the same scenario gives the same
// trace on every run (docs/testing.md), also when an actor that watches
// more than a few others stops.
func TestStopOfWatcherOfManyIsDeterministic(t *testing.T) {
	want := watchManyScenario(t)
	for range 10 {
		require.Equal(t, want, watchManyScenario(t))
	}
}
