package testkit_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

func TestEventually(t *testing.T) {
	t.Run("passes once the actor has counted", func(t *testing.T) {
		sys := testkit.NewSystem(t)
		var n atomic.Int64
		pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
			if _, ok := c.Message().(int); ok {
				n.Add(1)
			}
		}))
		for i := range 100 {
			sys.Root().Send(pid, i)
		}
		testkit.Eventually(t, func() bool { return n.Load() == 100 }, 0)
	})
	cases := []struct {
		name string
		args []any
		want string
	}{
		{"no message", nil, "testkit: Eventually: condition not met within 5ms"},
		{"one value", []any{"counter stuck"}, "testkit: Eventually: condition not met within 5ms: counter stuck"},
		{"format and args", []any{"counter at %d of %d", 3, 5}, "testkit: Eventually: condition not met within 5ms: counter at 3 of 5"},
	}
	for _, tc := range cases {
		t.Run("fails: "+tc.name, func(t *testing.T) {
			rec := newRecorder(t)
			calls := 0
			testkit.Eventually(rec, func() bool { calls++; return false }, 5*time.Millisecond, tc.args...)
			assert.Equal(t, []string{tc.want}, rec.Fatals())
			assert.Greater(t, calls, 1, "re-checked while waiting")
		})
	}
}
