package middleware_test

import (
	"context"
	"io"
	"log/slog"
	"math"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/fraktor-go/fraktor/scheduler"
	"github.com/fraktor-go/fraktor/scheduler/middleware"
)

// benchResults cycles through the result kinds Telemetry distinguishes.
var benchResults = [...]scheduler.InvokeResult{
	scheduler.Completed(true),
	scheduler.Yielded(),
	scheduler.Suspended(scheduler.ReasonRateLimit, scheduler.ResumeAfter(time.Millisecond)),
	scheduler.Failed(errActor, time.Millisecond),
}

// runBench measures one BeforeInvoke + AfterInvoke per iteration.
func runBench(b *testing.B, m scheduler.Middleware) {
	b.Helper()
	var ic scheduler.InvokeContext
	start := time.Now()
	warm := func(i int) {
		ic.Reset(1, 300, start)
		m.BeforeInvoke(&ic)
		ic.Processed = 10
		m.AfterInvoke(&ic, benchResults[i%len(benchResults)])
	}
	for i := range 2 * len(benchResults) { // create the metadata map and SDK series
		warm(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		warm(i)
		i++
	}
}

func BenchmarkTelemetry_SDK(b *testing.B) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	tel, err := middleware.NewTelemetry(mp, scheduler.SystemClock{}, middleware.WithAttributes(systemAttr))
	if err != nil {
		b.Fatal(err)
	}
	runBench(b, tel)
}

func BenchmarkTelemetry_Noop(b *testing.B) {
	tel, err := middleware.NewTelemetry(nil, scheduler.SystemClock{})
	if err != nil {
		b.Fatal(err)
	}
	runBench(b, tel)
}

func BenchmarkLogging_Disabled(b *testing.B) {
	runBench(b, middleware.NewLogging(slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo})), scheduler.SystemClock{}))
}

func BenchmarkLogging_Enabled(b *testing.B) {
	runBench(b, middleware.NewLogging(slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelDebug})), scheduler.SystemClock{}))
}

// Tokens always available: the batch is capped (limit < hint) and tokens taken.
func BenchmarkRateLimit_Continue(b *testing.B) {
	runBench(b, newRateLimit(b, 1e12, 100, scheduler.SystemClock{}))
}

// The bucket is empty: every call breaks and stores the wait.
func BenchmarkRateLimit_Break(b *testing.B) {
	rl := newRateLimit(b, 1e-3, 1, scheduler.SystemClock{})
	var ic scheduler.InvokeContext
	ic.Processed = 1
	rl.AfterInvoke(&ic, scheduler.Completed(false))
	runBench(b, rl)
}

func BenchmarkRateLimit_Unlimited(b *testing.B) {
	runBench(b, newRateLimit(b, math.Inf(1), 1, scheduler.SystemClock{}))
}

// The three together in a CompositeMiddleware, Debug logging off.
func BenchmarkChain_TelemetryLoggingRateLimit(b *testing.B) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	tel, err := middleware.NewTelemetry(mp, scheduler.SystemClock{})
	if err != nil {
		b.Fatal(err)
	}
	runBench(b, scheduler.NewComposite(
		tel,
		middleware.NewLogging(slog.New(slog.NewTextHandler(io.Discard, nil)), scheduler.SystemClock{}),
		newRateLimit(b, 1e12, 100, scheduler.SystemClock{}),
	))
}
