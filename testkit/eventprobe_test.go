package testkit_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

type thing struct{ N int }

func TestEventProbeExpectations(t *testing.T) {
	cases := []struct {
		name    string
		publish []any
		expect  func(t *testing.T, ep *testkit.EventProbe)
		want    []string // substrings of the one failure; nil: it passes
	}{
		{"ExpectEvent passes", []any{&thing{N: 1}}, func(t *testing.T, ep *testkit.EventProbe) {
			assert.Equal(t, 1, testkit.ExpectEvent[*thing](ep, 0).N)
		}, nil},
		{"ExpectEvent names the wrong type and value", []any{5}, func(t *testing.T, ep *testkit.EventProbe) {
			assert.Nil(t, testkit.ExpectEvent[*thing](ep, 0))
		}, []string{"ExpectEvent[*testkit_test.thing]: got int 5 instead"}},
		{"ExpectEvent with nothing", nil, func(t *testing.T, ep *testkit.EventProbe) {
			testkit.ExpectEvent[*thing](ep, 20*time.Millisecond)
		}, []string{"ExpectEvent[*testkit_test.thing]: got no event within 20ms"}},
		{"ExpectNoEvent passes", nil, func(t *testing.T, ep *testkit.EventProbe) {
			ep.ExpectNoEvent(10 * time.Millisecond)
		}, nil},
		{"ExpectNoEvent names what arrived", []any{&thing{N: 1}}, func(t *testing.T, ep *testkit.EventProbe) {
			ep.ExpectNoEvent(10 * time.Millisecond)
		}, []string{"ExpectNoEvent: got *testkit_test.thing &{N:1} within 10ms"}},
		{"FishForEvent skips to the match", []any{1, &thing{N: 1}, &thing{N: 2}, "after"}, func(t *testing.T, ep *testkit.EventProbe) {
			assert.Equal(t, 2, testkit.FishForEvent(ep, func(e *thing) bool { return e.N == 2 }, 0).N)
			assert.Equal(t, "after", testkit.ExpectEvent[string](ep, 0))
		}, nil},
		{"FishForEvent lists what it skipped", []any{1, &thing{N: 1}}, func(t *testing.T, ep *testkit.EventProbe) {
			testkit.FishForEvent(ep, func(e *thing) bool { return e.N == 2 }, 20*time.Millisecond)
		}, []string{"FishForEvent[*testkit_test.thing]: no match within 20ms", "skipped [int 1; *testkit_test.thing &{N:1}]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bothModes(t, func(t *testing.T, sys *actor.System) {
				rec := newRecorder(t)
				ep := testkit.NewEventProbe(rec, sys)
				for _, e := range tc.publish {
					sys.EventStream().Publish(e)
				}
				tc.expect(t, ep)
				if tc.want == nil {
					assert.Empty(t, rec.Fatals())
					return
				}
				require.Len(t, rec.Fatals(), 1, "one failure")
				assert.Contains(t, rec.lastFatal(), "testkit: EventProbe: ")
				for _, w := range tc.want {
					assert.Contains(t, rec.lastFatal(), w)
				}
			})
		})
	}
}

func TestEventProbeFilters(t *testing.T) {
	bothModes(t, func(t *testing.T, sys *actor.System) {
		ep := testkit.NewEventProbe(t, sys, testkit.OfType[*thing](), testkit.OfType[string]())
		for _, e := range []any{1, &thing{N: 1}, 2.5, "s"} {
			sys.EventStream().Publish(e)
		}
		assert.Equal(t, 1, testkit.ExpectEvent[*thing](ep, 0).N)
		assert.Equal(t, "s", testkit.ExpectEvent[string](ep, 0))
		ep.ExpectNoEvent(10 * time.Millisecond)
	})
}

func TestEventProbeUnsubscribesAtCleanup(t *testing.T) {
	sys := testkit.NewSystem(t)
	es := sys.EventStream()
	before := es.Len()
	t.Run("probe", func(t *testing.T) {
		testkit.NewEventProbe(t, sys)
		assert.Equal(t, before+1, es.Len())
	})
	assert.Equal(t, before, es.Len())
}

// In deterministic mode the EventStream still delivers on a goroutine of
// its own; the probe waits for every event published so far, so no
// expectation misses one and none needs a timeout. Repeated to catch a
// lost wake-up.
func TestEventProbeDeterministic(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	ep := testkit.NewEventProbe(t, sys.System)
	pub := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case int:
			c.System().EventStream().Publish(&thing{N: m})
		case *actor.ReceiveTimeout:
			c.System().EventStream().Publish("idle")
			c.SetReceiveTimeout(0)
		case string:
			c.SetReceiveTimeout(250 * time.Millisecond)
		}
	}))
	for i := range 300 {
		sys.Root().Send(pub, i)
		require.Equal(t, i, testkit.ExpectEvent[*thing](ep, 0).N)
	}
	ep.ExpectNoEvent(0)

	// Dead letters are published on the sending goroutine.
	ghost := actor.NewPID(actor.LocalAddress, "ghost")
	sys.Root().Send(ghost, "hello?")
	dl := testkit.ExpectEvent[*actor.DeadLetterEvent](ep, 0)
	assert.True(t, dl.PID.Equal(ghost))
	assert.Equal(t, "hello?", dl.Message)

	// A virtual timeout advances the clock to the event's deadline.
	start := sys.Elapsed()
	sys.Root().Send(pub, "arm")
	assert.Equal(t, "idle", testkit.ExpectEvent[string](ep, time.Minute))
	assert.Equal(t, 250*time.Millisecond, sys.Elapsed()-start)
	ep.ExpectNoEvent(time.Hour)
}

// A subscription buffer that overflows drops events; the probe neither
// hangs waiting for them nor hides it.
func TestEventProbeReportsDrops(t *testing.T) {
	const n = 500
	sys := testkit.NewManualSystem(t, func(c *actor.SystemConfig) { c.EventBuffer = 1 })
	rec := newRecorder(t)
	ep := testkit.NewEventProbe(rec, sys.System)
	for i := range n {
		sys.EventStream().Publish(i)
	}
	start := time.Now()
	ep.ExpectNoEvent(0) // takes event 0, which always fits the empty buffer
	assert.Less(t, time.Since(start), testkit.DefaultTimeout, "no wait for dropped events")
	assert.Equal(t, uint64(n), uint64(ep.Len()+1)+ep.Subscription().Dropped(), "every event is recorded or counted as dropped")
	require.Len(t, rec.Fatals(), 1)
	assert.Contains(t, rec.lastFatal(), "ExpectNoEvent: got int 0")
	if d := ep.Subscription().Dropped(); d > 0 {
		assert.Contains(t, rec.lastFatal(), fmt.Sprintf("the subscription dropped %d events", d))
	}
}
