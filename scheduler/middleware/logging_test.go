package middleware_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/scheduler"
	"github.com/fraktor-go/fraktor/scheduler/middleware"
)

// capture is a slog.Handler that keeps the records it is given.
type capture struct {
	level   slog.Leveler
	mu      sync.Mutex
	records []slog.Record
}

func (c *capture) Enabled(_ context.Context, l slog.Level) bool { return l >= c.level.Level() }
func (c *capture) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.records = append(c.records, r.Clone())
	return nil
}
func (c *capture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *capture) WithGroup(string) slog.Handler      { return c }

func (c *capture) all() []slog.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]slog.Record(nil), c.records...)
}

// attrs flattens a record's attributes (groups as "group.key").
func attrs(r slog.Record) map[string]any {
	out := map[string]any{}
	var add func(prefix string, a slog.Attr)
	add = func(prefix string, a slog.Attr) {
		if a.Value.Kind() == slog.KindGroup {
			for _, g := range a.Value.Group() {
				add(prefix+a.Key+".", g)
			}
			return
		}
		out[prefix+a.Key] = a.Value.Any()
	}
	r.Attrs(func(a slog.Attr) bool { add("", a); return true })
	return out
}

func TestLogging_BeforeAndAfterRecords(t *testing.T) {
	tests := []struct {
		name   string
		result scheduler.InvokeResult
		extra  map[string]any
	}{
		{"completed", scheduler.Completed(true), map[string]any{"ready": true}},
		{"yielded", scheduler.Yielded(), map[string]any{}},
		{"suspended", scheduler.Suspended(scheduler.ReasonRateLimit, scheduler.ResumeAfter(40*time.Millisecond)),
			map[string]any{"suspend.reason": "RateLimit", "suspend.resume_after": 40 * time.Millisecond}},
		{"failed", scheduler.Failed(errActor, 100*time.Millisecond),
			map[string]any{"failure.error": errActor, "failure.retry_after": 100 * time.Millisecond}},
		{"stopped", scheduler.Stopped(), map[string]any{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := scheduler.NewManualClock(epoch)
			h := &capture{level: slog.LevelDebug}
			lg := middleware.NewLogging(slog.New(h), clock)
			var ic scheduler.InvokeContext
			ic.Reset(42, 300, clock.Now())
			require.Equal(t, scheduler.Continue, lg.BeforeInvoke(&ic))
			id, ok := middleware.LogIDOf(&ic)
			require.True(t, ok)
			assert.Equal(t, middleware.LogID(1), id)
			clock.Advance(2 * time.Millisecond)
			ic.Processed = 9
			lg.AfterInvoke(&ic, tt.result)

			recs := h.all()
			require.Len(t, recs, 2)
			assert.Equal(t, "invoke begin", recs[0].Message)
			assert.Equal(t, slog.LevelDebug, recs[0].Level)
			assert.Equal(t, map[string]any{"mailbox": uint64(42), "log_id": uint64(1), "throughput_hint": int64(300)}, attrs(recs[0]))
			assert.Equal(t, "invoke end", recs[1].Message)
			want := map[string]any{
				"mailbox": uint64(42), "log_id": uint64(1), "result": tt.result.Kind.String(),
				"processed": int64(9), "duration": 2 * time.Millisecond,
			}
			for k, v := range tt.extra {
				want[k] = v
			}
			assert.Equal(t, want, attrs(recs[1]))
		})
	}
}

func TestLogging_IDsIncrease(t *testing.T) {
	h := &capture{level: slog.LevelDebug}
	lg := middleware.NewLogging(slog.New(h), nil)
	var ic scheduler.InvokeContext
	for want := middleware.LogID(1); want <= 3; want++ {
		ic.Reset(1, 1, time.Now())
		lg.BeforeInvoke(&ic)
		id, _ := middleware.LogIDOf(&ic)
		assert.Equal(t, want, id)
		lg.AfterInvoke(&ic, scheduler.Completed(false))
	}
	assert.Equal(t, "0000000000000003", middleware.LogID(3).String())
	assert.Equal(t, "00000000000000ff", middleware.LogID(255).String())
}

// When Debug is off, Logging does nothing: no record, no id, no metadata.
func TestLogging_DisabledDoesNothing(t *testing.T) {
	var level slog.LevelVar
	level.Set(slog.LevelInfo)
	h := &capture{level: &level}
	lg := middleware.NewLogging(slog.New(h), nil)
	var ic scheduler.InvokeContext
	ic.Reset(1, 10, time.Now())
	require.Equal(t, scheduler.Continue, lg.BeforeInvoke(&ic))
	_, ok := ic.Get(scheduler.MetaLogID)
	assert.False(t, ok)

	level.Set(slog.LevelDebug) // switched on mid-invocation: no unpaired record
	lg.AfterInvoke(&ic, scheduler.Completed(false))
	assert.Empty(t, h.all())

	ic.Reset(1, 10, time.Now())
	lg.BeforeInvoke(&ic)
	id, _ := middleware.LogIDOf(&ic)
	assert.Equal(t, middleware.LogID(1), id, "no id was drawn while disabled")

	lg = middleware.NewLogging(nil, nil)
	ic.Reset(1, 10, time.Now())
	lg.BeforeInvoke(&ic)
	lg.AfterInvoke(&ic, scheduler.Completed(false))
}

// One Logging shared by invokers on several goroutines hands out unique ids.
func TestLogging_SharedIsSafe(t *testing.T) {
	h := &capture{level: slog.LevelDebug}
	lg := middleware.NewLogging(slog.New(h), nil)
	const workers, each = 4, 100
	ids := make(chan middleware.LogID, workers*each)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var ic scheduler.InvokeContext
			for range each {
				ic.Reset(scheduler.MailboxIndex(w), 1, time.Now())
				lg.BeforeInvoke(&ic)
				id, _ := middleware.LogIDOf(&ic)
				ids <- id
				lg.AfterInvoke(&ic, scheduler.Completed(false))
			}
		})
	}
	wg.Wait()
	close(ids)
	seen := map[middleware.LogID]bool{}
	for id := range ids {
		require.False(t, seen[id], "duplicate id %s", id)
		seen[id] = true
	}
	assert.Len(t, seen, workers*each)
	assert.Len(t, h.all(), 2*workers*each)
}

func TestBatchLimit_Helpers(t *testing.T) {
	var ic scheduler.InvokeContext
	_, ok := middleware.BatchLimit(&ic)
	assert.False(t, ok)
	middleware.LimitBatch(&ic, 10)
	middleware.LimitBatch(&ic, 20)
	n, ok := middleware.BatchLimit(&ic)
	assert.True(t, ok)
	assert.Equal(t, 10, n)
	middleware.LimitBatch(&ic, -3)
	n, _ = middleware.BatchLimit(&ic)
	assert.Equal(t, 0, n)
	ic.Set(middleware.MetaBatchLimit, "ten")
	_, ok = middleware.BatchLimit(&ic)
	assert.False(t, ok, "a value of the wrong type is ignored")
	ic.Set(scheduler.MetaLogID, "not a LogID")
	_, ok = middleware.LogIDOf(&ic)
	assert.False(t, ok)
}
