package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/scheduler/middleware"
)

type (
	deposit struct{ amount int }
	balance struct{}
	crash   struct{}
)

// account is an actor with state: a balance that a crash resets, because a
// restart makes a fresh instance.
func account() actor.Actor {
	total := 0
	return actor.ReceiveFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			fmt.Printf("  [%s] started (balance %d)\n", c.Self().ID, total)
		case *actor.Restarting:
			fmt.Printf("  [%s] restarting after a failure\n", c.Self().ID)
		case *actor.Stopped:
			fmt.Printf("  [%s] stopped\n", c.Self().ID)
		case *deposit:
			total += m.amount
		case *balance:
			c.Respond(total)
		case *crash:
			panic("simulated bug")
		}
	})
}

func main() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// Metrics go to an OpenTelemetry SDK reader that the demo prints at the
	// end; a real program would plug in an exporter (OTLP, Prometheus).
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	sys, err := actor.NewSystem(actor.SystemConfig{Name: "demo", Logger: logger, MeterProvider: mp, KindMiddleware: middleware.KindTelemetry()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	fmt.Println("1. spawn an actor")
	acct, _ := sys.Root().SpawnNamed(actor.PropsFromProducer(account, actor.WithKind("account")), "account-42")

	fmt.Println("2. send deposits, then ask for the balance (request/response)")
	for _, a := range []int{10, 20, 12} {
		sys.Root().Send(acct, &deposit{amount: a})
	}
	b, err := actor.Request[int](ctx, sys.Root(), acct, &balance{})
	fmt.Printf("  balance = %d (err %v)\n", b, err)

	fmt.Println("3. make it panic: the guardian restarts it (state is reset)")
	sys.Root().Send(acct, &crash{})
	b, err = actor.Request[int](ctx, sys.Root(), acct, &balance{})
	fmt.Printf("  balance after restart = %d (err %v)\n", b, err)

	fmt.Println("4. a request that nobody answers times out")
	short, cancelShort := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = actor.Request[int](short, sys.Root(), acct, "unknown message")
	cancelShort()
	fmt.Printf("  err = %v\n", err)

	fmt.Println("5. stop it and wait for Terminated")
	res, err := sys.Root().StopFuture(acct).Result()
	fmt.Printf("  terminated: %v (err %v)\n", res.(*actor.Terminated).Who, err)

	fmt.Println("6. a request to a stopped actor is a dead letter")
	_, err = actor.Request[int](ctx, sys.Root(), acct, &balance{})
	fmt.Printf("  err = %v\n", err)

	fmt.Println("7. spawn 10,000 actors, send each a message, shut down gracefully")
	// Each worker reports its message handled: Shutdown stops actors
	// before their queued messages (those become dead letters), so the
	// demo waits for the messages first and the count below is the run's
	// one dead letter, on every machine.
	var handled sync.WaitGroup
	handled.Add(10000)
	worker := actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*deposit); ok {
			handled.Done()
		}
	}, actor.WithKind("worker"))
	for i := 0; i < 10000; i++ {
		sys.Root().Send(sys.Root().Spawn(worker), &deposit{amount: 1})
	}
	allHandled := make(chan struct{})
	go func() { handled.Wait(); close(allHandled) }()
	select {
	case <-allHandled:
	case <-ctx.Done():
		fmt.Fprintln(os.Stderr, "workers:", ctx.Err())
		os.Exit(1)
	}
	start := time.Now()
	if err := sys.Shutdown(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "shutdown:", err)
		os.Exit(1)
	}
	fmt.Printf("  shut down in %v; dead letters so far: %d\n", time.Since(start).Round(time.Millisecond), sys.DeadLetters())

	fmt.Println("8. the OpenTelemetry metrics the run produced")
	printMetrics(reader)
}

func printMetrics(reader *sdkmetric.ManualReader) {
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		fmt.Println("  collect:", err)
		return
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					fmt.Printf("  %-34s %-22s %d\n", m.Name, attrs(dp.Attributes.ToSlice()), dp.Value)
				}
			case metricdata.Gauge[int64]:
				for _, dp := range d.DataPoints {
					fmt.Printf("  %-34s %-22s %d\n", m.Name, attrs(dp.Attributes.ToSlice()), dp.Value)
				}
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					mean := 0.0
					if dp.Count > 0 {
						mean = dp.Sum / float64(dp.Count)
					}
					fmt.Printf("  %-34s %-22s count=%d mean=%.1fµs\n", m.Name, attrs(dp.Attributes.ToSlice()), dp.Count, mean*1e6)
				}
			}
		}
	}
}

func attrs(kvs []attribute.KeyValue) string {
	out := ""
	for _, kv := range kvs {
		if out != "" {
			out += ","
		}
		out += string(kv.Key[strings.LastIndex(string(kv.Key), ".")+1:]) + "=" + kv.Value.String()
	}
	return out
}
