package actor_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/extension"
)

// auditExt is a test extension: it spawns a system actor that counts the
// dead letters it sees on the EventStream, and records its shutdown.
type auditExt struct {
	name, requires string
	enabled        bool
	invalid        error
	failInstall    error
	order          *[]string
	mu             *sync.Mutex
}

func (a auditExt) Name() string { return a.name }
func (a auditExt) Requires() []string {
	if a.requires == "" {
		return nil
	}
	return []string{a.requires}
}
func (a auditExt) Enabled() bool   { return a.enabled }
func (a auditExt) Validate() error { return a.invalid }

type auditHandle struct {
	ext   auditExt
	sys   actor.Host
	pid   *actor.PID
	sub   *actor.Subscription
	count chan int
}

func (a auditExt) Install(_ context.Context, sys actor.Host) (actor.Extension, error) {
	if a.failInstall != nil {
		return nil, a.failInstall
	}
	h := &auditHandle{ext: a, sys: sys, count: make(chan int, 1)}
	seen := 0
	pid, err := sys.SpawnSystem(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.DeadLetterEvent:
			seen++
		case string:
			c.Respond(seen)
		}
	}), a.name)
	if err != nil {
		return nil, err
	}
	h.pid = pid
	h.sub = actor.Subscribe(sys.EventStream(), func(e *actor.DeadLetterEvent) { sys.Root().Send(pid, e) })
	a.mu.Lock()
	*a.order = append(*a.order, "install:"+a.name)
	a.mu.Unlock()
	return h, nil
}

func (h *auditHandle) Shutdown(context.Context) error {
	h.sys.EventStream().Unsubscribe(h.sub)
	h.ext.mu.Lock()
	*h.ext.order = append(*h.ext.order, "shutdown:"+h.ext.name)
	h.ext.mu.Unlock()
	return nil
}

func newAudit(name, requires string, order *[]string, mu *sync.Mutex) auditExt {
	return auditExt{name: name, requires: requires, enabled: true, order: order, mu: mu}
}

// B1.1, B1.3, B1.5: installed in dependency order before NewSystem returns,
// reachable by typed lookup, statuses queryable, shut down in reverse order.
func TestExtensionsInstallOrderLookupShutdown(t *testing.T) {
	var order []string
	var mu sync.Mutex
	sys, err := actor.NewSystem(actor.SystemConfig{Extensions: []actor.ExtensionInstaller{
		newAudit("cluster", "remote", &order, &mu), // needs remote: installed second
		newAudit("remote", "", &order, &mu),
	}})
	require.NoError(t, err)
	assert.Equal(t, []string{"install:remote", "install:cluster"}, order)
	st, err := sys.Extensions().Status("cluster")
	require.NoError(t, err)
	assert.Equal(t, extension.Ready, st.State)

	h, err := extension.Lookup[*auditHandle](sys.Extensions(), "remote")
	require.NoError(t, err)
	sys.Root().Send(actor.NewPID(actor.LocalAddress, "nobody"), "lost")
	require.Eventually(t, func() bool {
		n, err := actor.Request[int](t.Context(), sys.Root(), h.pid, "count?")
		return err == nil && n == 1
	}, 5e9, 1e6, "the extension's system actor saw the dead letter")

	require.NoError(t, sys.Shutdown(context.Background()))
	assert.Equal(t, []string{"install:remote", "install:cluster", "shutdown:cluster", "shutdown:remote"}, order)
	st, _ = sys.Extensions().Status("remote")
	assert.Equal(t, extension.Stopped, st.State)
}

// B1.2: a validation error or a missing requirement fails NewSystem with a
// descriptive error naming the installer, and nothing is left running
// (TestMain's goleak checks the goroutines).
func TestExtensionsFailureLeavesNothingRunning(t *testing.T) {
	var order []string
	var mu sync.Mutex
	bad := newAudit("metrics", "", &order, &mu)
	bad.invalid = errors.New("endpoint must not be empty")
	_, err := actor.NewSystem(actor.SystemConfig{Extensions: []actor.ExtensionInstaller{newAudit("remote", "", &order, &mu), bad}})
	require.ErrorIs(t, err, extension.ErrValidation)
	assert.Contains(t, err.Error(), "metrics")
	assert.Contains(t, err.Error(), "endpoint must not be empty")
	assert.Empty(t, order, "validation happens before anything is installed")

	_, err = actor.NewSystem(actor.SystemConfig{Extensions: []actor.ExtensionInstaller{newAudit("cluster", "remote", &order, &mu)}})
	require.ErrorIs(t, err, extension.ErrMissingRequirement)
	assert.Contains(t, err.Error(), "cluster")

	failing := newAudit("cluster", "remote", &order, &mu)
	failing.failInstall = errors.New("port in use")
	_, err = actor.NewSystem(actor.SystemConfig{Extensions: []actor.ExtensionInstaller{newAudit("remote", "", &order, &mu), failing}})
	require.ErrorIs(t, err, extension.ErrInstall)
	assert.Equal(t, []string{"install:remote", "shutdown:remote"}, order, "rolled back")
}

// B1.4: a disabled extension creates nothing.
func TestExtensionDisabled(t *testing.T) {
	var order []string
	var mu sync.Mutex
	off := newAudit("remote", "", &order, &mu)
	off.enabled = false
	sys, err := actor.NewSystem(actor.SystemConfig{Extensions: []actor.ExtensionInstaller{off}})
	require.NoError(t, err)
	defer func() { require.NoError(t, sys.Shutdown(context.Background())) }()
	assert.Empty(t, order)
	st, err := sys.Extensions().Status("remote")
	require.NoError(t, err)
	assert.Equal(t, extension.Disabled, st.State)
	_, ok := sys.LookupPath("remote")
	assert.False(t, ok, "no system actor was spawned")
}
