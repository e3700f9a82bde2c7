package benchmarks

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	proto "github.com/asynkron/protoactor-go/actor"

	fraktor "github.com/fraktor-go/fraktor/actor"
)

// stallLimit bounds every wait of a workload: a workload that loses a
// message fails with ErrStalled instead of hanging the run.
const stallLimit = 3 * time.Minute

// newFraktor starts a fraktor-go system with its defaults: Workers =
// GOMAXPROCS, Throughput = 300 (scheduler.DefaultThroughput), no logger (no
// logging at all), no meter provider (no-op instruments).
func newFraktor() (*fraktor.System, error) {
	sys, err := fraktor.NewSystem(fraktor.SystemConfig{Name: "bench"})
	if err != nil {
		return nil, fmt.Errorf("benchmarks: fraktor system: %w", err)
	}
	return sys, nil
}

// stopFraktor shuts sys down, waiting at most stallLimit.
func stopFraktor(sys *fraktor.System) error {
	ctx, cancel := context.WithTimeout(context.Background(), stallLimit)
	defer cancel()
	return sys.Shutdown(ctx)
}

// newProto starts a protoactor-go system with its defaults (dispatcher
// throughput 300, Unbounded mailbox, no metrics provider) except the
// logger, which discards everything: protoactor-go logs at Info to stderr
// by default, fraktor-go logs nothing without a logger.
func newProto() *proto.ActorSystem {
	return proto.NewActorSystem(proto.WithLoggerFactory(func(*proto.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}))
}

// await waits for done, at most stallLimit.
func await(done <-chan struct{}) error {
	t := time.NewTimer(stallLimit)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
		return ErrStalled
	}
}

// awaitValue waits for one value on ch, at most stallLimit.
func awaitValue[T any](ch <-chan T) (T, error) {
	t := time.NewTimer(stallLimit)
	defer t.Stop()
	select {
	case v := <-ch:
		return v, nil
	case <-t.C:
		var zero T
		return zero, ErrStalled
	}
}

// Messages shared by the workloads. They are pointers to empty or small
// structs so that sending one does not allocate unless the workload says so.
type (
	ping  struct{}
	pong  struct{}
	start struct{}
)

var (
	pingMsg  = &ping{}
	pongMsg  = &pong{}
	startMsg = &start{}
)
