package middleware_test

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"go.opentelemetry.io/otel/attribute"

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
