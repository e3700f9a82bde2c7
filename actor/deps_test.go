package actor_test

import (
	"context"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/scheduler/middleware"
	"github.com/fraktor-go/fraktor/testkit"
)

// The core does not depend on a plug-in: actor imports neither the
// scheduler middleware (a user plugs it in with SystemConfig.KindMiddleware
// or WithInvokeMiddleware) nor golang.org/x/time.
func TestActorDependsOnNoPlugin(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	out, err := exec.CommandContext(t.Context(), gobin, "list", "-deps", ".").Output()
	require.NoError(t, err)
	for _, dep := range strings.Fields(string(out)) {
		assert.NotContains(t, dep, "golang.org/x/time")
		assert.NotContains(t, dep, "scheduler/middleware")
	}
	assert.Equal(t, actor.AttrActorKind, middleware.AttrActorKind)
}

// records is a slog.Handler that keeps the records it gets.
type records struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *records) WithGroup(string) slog.Handler            { return r }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec)
	return nil
}

func (r *records) deadLetters() (n int, suppressed []uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range r.recs {
		if rec.Message != "dead letter" {
			continue
		}
		n++
		rec.Attrs(func(a slog.Attr) bool {
			if a.Key == "suppressed" {
				suppressed = append(suppressed, a.Value.Uint64())
			}
			return true
		})
	}
	return n, suppressed
}

// Dead letters are logged at most once per DeadLetterLogInterval of the
// system clock, with the number suppressed since the last record.
func TestDeadLetterLogThrottled(t *testing.T) {
	rec := &records{}
	sys := testkit.NewManualSystem(t, func(c *actor.SystemConfig) {
		c.Logger = slog.New(rec)
		c.DeadLetterLogInterval = time.Second
	})
	nobody := actor.NewPID(actor.LocalAddress, "nobody")
	for range 3 {
		sys.Root().Send(nobody, "lost")
	}
	n, _ := rec.deadLetters()
	require.Equal(t, 1, n)
	sys.Advance(999 * time.Millisecond)
	sys.Root().Send(nobody, "lost")
	n, _ = rec.deadLetters()
	require.Equal(t, 1, n, "logged again within the interval")
	sys.Advance(time.Millisecond)
	sys.Root().Send(nobody, "lost")
	n, suppressed := rec.deadLetters()
	require.Equal(t, 2, n)
	require.Equal(t, []uint64{0, 3}, suppressed)
}
