package actor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/scheduler"
)

// Shutdown stops the system guardian's tree after the user guardian's:
// an extension's system actor gets Stopping and Stopped, and its watchers
// Terminated. Before, the root guardian did not count the guardians among
// its children, so stopping it stopped neither, and system actors were
// abandoned without their Stopped.
func TestShutdownStopsSystemActors(t *testing.T) {
	sys, err := NewSystem(SystemConfig{})
	require.NoError(t, err)
	got := make(chan string, 4)
	_, err = host{sys}.SpawnSystem(PropsFromFunc(func(c Context) {
		switch c.Message().(type) {
		case *Stopping:
			got <- "stopping"
		case *Stopped:
			got <- "stopped"
		}
	}), "audit")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, sys.Shutdown(ctx))
	close(got)
	var seen []string
	for s := range got {
		seen = append(seen, s)
	}
	require.Equal(t, []string{"stopping", "stopped"}, seen)
	require.Zero(t, sys.ProcessCount(), "every process is gone")
}

// A top-level actor's failure that the GuardianStrategy escalates stops
// that actor, and only it: the user guardian goes on (later spawns work)
// and Shutdown completes. Before, the root guardian stopped the user
// guardian with its whole tree and every later spawn failed with
// ErrParentStopping while the system ran on (newuser8's report); and before
// that, the root guardian ignored the failure and the failed actor stayed
// suspended for good.
func TestEscalateFromTopLevelStopsOnlyTheActor(t *testing.T) {
	escalate := OneForOne(-1, 0, func(error) Directive { return EscalateDirective })
	sys, err := NewSystem(SystemConfig{GuardianStrategy: escalate})
	require.NoError(t, err)
	pid := sys.Root().Spawn(PropsFromFunc(func(c Context) {
		if _, ok := c.Message().(string); ok {
			panic(errors.New("boom"))
		}
	}))
	watch := sys.newFuture(nil, 0)
	sys.sendSystem(nil, pid, &Watch{Watcher: watch.PID()})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sys.Root().Send(pid, "fail")
	res, err := watch.ResultContext(ctx)
	require.NoError(t, err, "the failed actor was never stopped")
	require.True(t, res.(*Terminated).Who.Equal(pid))
	late, err := sys.Root().SpawnNamed(PropsFromFunc(func(Context) {}), "late")
	require.NoError(t, err, "the user guardian goes on")
	require.NotNil(t, late)
	require.NoError(t, sys.Shutdown(ctx))
}

// The blocking pool is not started once Shutdown has begun: a spawn that
// passed Shutdown's check just before it (a race) would otherwise start
// the pool after Shutdown looked for it, and its workers would outlive
// the system. Such an actor runs on the shared pool instead.
func TestNoBlockingPoolAfterShutdownBegan(t *testing.T) {
	sys, err := NewSystem(SystemConfig{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, sys.Shutdown(ctx))
	d := sys.dispatcherFor(PropsFromFunc(func(Context) {}, WithBlocking()))
	require.True(t, d == scheduler.Dispatcher(sys.coord), "the shared pool")
	sys.blockingMu.Lock()
	defer sys.blockingMu.Unlock()
	require.Nil(t, sys.blocking, "no pool started after Shutdown")
}
