package testkit

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fraktor-go/fraktor/actor"
)

// Option adjusts the SystemConfig of a test system.
type Option func(*actor.SystemConfig)

// WithConfig replaces the whole config (options after it still apply).
func WithConfig(cfg actor.SystemConfig) Option { return func(c *actor.SystemConfig) { *c = cfg } }

// WithGuardianStrategy sets the strategy that supervises top-level actors
// (SystemConfig.GuardianStrategy).
func WithGuardianStrategy(s actor.SupervisorStrategy) Option {
	return func(c *actor.SystemConfig) { c.GuardianStrategy = s }
}

// shutdownTimeout bounds the shutdown at test cleanup.
const shutdownTimeout = 10 * time.Second

// NewSystem starts a system (named "test" unless an option names it) for
// one test. At cleanup it shuts the system down, fails the test (Errorf)
// if that fails, and then fails it if a goroutine started after NewSystem
// is still running (goleak, which retries for a while so that goroutines on
// their way out are not reported).
//
// The leak check sees every goroutine of the process: tests that use
// NewSystem must not run in parallel (t.Parallel) with tests that start
// goroutines, or they report each other's.
func NewSystem(t testing.TB, opts ...Option) *actor.System {
	t.Helper()
	return startSystem(t, true, opts)
}

// NewPeerSystem starts a system for a test that runs several systems at
// once (remote, cluster): it is shut down at cleanup like NewSystem's, but
// without the per-system leak check, which would report the goroutines of
// the other systems of the same test. Check leaks for the whole package
// with goleak.VerifyTestMain instead.
func NewPeerSystem(t testing.TB, opts ...Option) *actor.System {
	t.Helper()
	return startSystem(t, false, opts)
}

func startSystem(t testing.TB, leakCheck bool, opts []Option) *actor.System {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	cfg := actor.SystemConfig{Name: "test"}
	for _, o := range opts {
		o(&cfg)
	}
	sys, err := actor.NewSystem(cfg)
	if err != nil {
		t.Fatalf("testkit: NewSystem: %v", err)
		return nil
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			t.Errorf("testkit: Shutdown: %v", err)
		}
		if !leakCheck {
			return
		}
		if err := goleak.Find(ignore); err != nil {
			t.Errorf("testkit: leaked goroutines: %v", err)
		}
	})
	return sys
}
