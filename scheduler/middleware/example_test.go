package middleware_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/scheduler"
	"github.com/fraktor-go/fraktor/scheduler/middleware"
)

// The invoker side of the contract, step by step: RateLimit caps the batch
// at the tokens available, takes what was processed, and breaks with the
// wait for the next token when the bucket is empty.
func ExampleRateLimit() {
	clock := scheduler.NewManualClock(time.Unix(0, 0))
	rl, err := middleware.NewRateLimit(middleware.RateLimitConfig{PerSecond: 100, Burst: 10}, clock)
	if err != nil {
		fmt.Println(err)
		return
	}
	var ic scheduler.InvokeContext
	for range 3 {
		ic.Reset(1, 50, clock.Now())
		if rl.BeforeInvoke(&ic) == scheduler.Break {
			res := scheduler.Suspended(scheduler.ReasonRateLimit, scheduler.ResumeAfter(ic.ResumeAfter()))
			rl.AfterInvoke(&ic, res)
			fmt.Println(res)
			clock.Advance(ic.ResumeAfter()) // the executor's resume timer
			continue
		}
		limit, _ := middleware.BatchLimit(&ic)
		ic.Processed = limit // the invoker processed as many as allowed
		rl.AfterInvoke(&ic, scheduler.Completed(true))
		fmt.Println("processed", limit)
	}
	// Output:
	// processed 10
	// Suspended{RateLimit, After(10ms)}
	// processed 1
}

// A system-wide chain: metrics and Debug logs for every invoker, and a
// per-actor rate limit.
func Example_chain() {
	clock := scheduler.SystemClock{}
	tel, err := middleware.NewTelemetry(nil /* your metric.MeterProvider */, clock,
		middleware.WithAttributes(attribute.String("fraktor.system", "shop")))
	if err != nil {
		fmt.Println(err)
		return
	}
	logging := middleware.NewLogging(slog.New(slog.NewTextHandler(os.Stdout, nil)), clock)
	// One RateLimit per invoker limits each actor on its own.
	rl, err := middleware.NewRateLimit(middleware.DefaultRateLimitConfig(), clock)
	if err != nil {
		fmt.Println(err)
		return
	}
	chain := scheduler.NewComposite(tel, logging, rl)
	fmt.Println(chain.Len())
	// Output: 3
}

// KindTelemetry plugged into a system (docs/observability.md): every actor
// kind gets the per-batch invoke instruments on the system's MeterProvider,
// read here through a ManualReader.
func ExampleKindTelemetry() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	sys, err := actor.NewSystem(actor.SystemConfig{MeterProvider: mp, KindMiddleware: middleware.KindTelemetry()})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	echo := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if s, ok := c.Message().(string); ok {
			c.Respond(s)
		}
	}, actor.WithKind("echo")))
	for range 3 {
		if _, err := actor.Request[string](ctx, sys.Root(), echo, "hi"); err != nil {
			fmt.Println(err)
		}
	}
	_ = sys.Shutdown(ctx) // every batch has ended: its metrics are recorded

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		fmt.Println(err)
		return
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == middleware.MetricDequeued {
				for _, dp := range sum.DataPoints {
					if kind, _ := dp.Attributes.Value(middleware.AttrActorKind); kind.AsString() == "echo" {
						fmt.Println(m.Name, kind.AsString(), dp.Value)
					}
				}
			}
		}
	}
	// Output: fraktor.actor.dequeued echo 3
}
