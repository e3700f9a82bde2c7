package extension_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/extension"
)

// B1.5: status transitions are kept and observable, in order.
func TestStatus_Transitions(t *testing.T) {
	var sl statusLog
	h := newHost()
	h.reg = extension.NewRegistry[*host](extension.Options{OnStatus: sl.on})
	require.NoError(t, h.reg.InstallAll(context.Background(), h, installers(
		&fake{name: "off", disabled: true},
		&fake{name: "cluster", requires: []string{"remote"}, starter: true},
		&fake{name: "remote"},
	)))
	assert.Equal(t, []string{
		"off:Disabled",
		"remote:Installing", "remote:Ready",
		"cluster:Installing", "cluster:Starting",
		"cluster:Ready",
	}, sl.events())
	assert.Equal(t, []string{"install remote", "install cluster", "start cluster"}, h.events())
	assert.Equal(t, map[string]extension.Status{
		"off":     {State: extension.Disabled},
		"remote":  {State: extension.Ready},
		"cluster": {State: extension.Ready},
	}, h.reg.Statuses())

	require.NoError(t, h.reg.ShutdownAll(context.Background()))
	assert.Equal(t, []string{"cluster:Stopped", "remote:Stopped"}, sl.events()[6:])
	st, err := h.reg.Status("remote")
	require.NoError(t, err)
	assert.Equal(t, "Stopped", st.String())

	_, err = h.reg.Status("unknown")
	require.ErrorIs(t, err, extension.ErrNotInstalled)
}

func TestShutdownAll_ReverseOrderIdempotentJoined(t *testing.T) {
	errB, errA := errors.New("b would not stop"), errors.New("a would not stop")
	h := newHost()
	list := installers(
		&fake{name: "c", requires: []string{"b"}, goroutine: true},
		&fake{name: "a", goroutine: true, shutdownErr: errA},
		&fake{name: "b", requires: []string{"a"}, goroutine: true, shutdownErr: errB},
	)
	require.NoError(t, h.reg.InstallAll(context.Background(), h, list))
	assert.Len(t, h.snapshot(), 3)

	err := h.reg.ShutdownAll(context.Background())
	require.ErrorIs(t, err, extension.ErrShutdown)
	require.ErrorIs(t, err, errA)
	require.ErrorIs(t, err, errB)
	assert.Equal(t, []string{"install a", "install b", "install c", "shutdown c", "shutdown b", "shutdown a"}, h.events())
	assert.Empty(t, h.snapshot())

	st, _ := h.reg.Status("b")
	assert.Equal(t, extension.Stopped, st.State)
	assert.ErrorIs(t, st.Cause, errB)
	st, _ = h.reg.Status("c")
	assert.Equal(t, extension.Status{State: extension.Stopped}, st)

	require.NoError(t, h.reg.ShutdownAll(context.Background()), "second ShutdownAll is a no-op")
	assert.Len(t, h.events(), 6)
	_, err = extension.Lookup[*fakeExt](h.reg, "a")
	require.ErrorIs(t, err, extension.ErrNotInstalled)
}

// An Install failure shuts down what was installed before, in reverse order,
// and their goroutines end (goleak checks the rest of the package too).
func TestInstallAll_InstallFailureRollsBack(t *testing.T) {
	boom := errors.New("bind: address in use")
	tests := []struct {
		name     string
		last     extension.Installer[*host]
		sentinel error
		op       string
	}{
		{"install error", &fake{name: "c", installErr: boom}, boom, extension.OpInstall},
		{"install panics", &fake{name: "c", panicOn: "install"}, extension.ErrPanic, extension.OpInstall},
		{"nil extension", nilInstaller{}, nil, extension.OpInstall},
		{"start error", &fake{name: "c", starter: true, goroutine: true, startErr: boom}, boom, extension.OpStart},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost()
			var sl statusLog
			h.reg = extension.NewRegistry[*host](extension.Options{OnStatus: sl.on})
			list := []extension.Installer[*host]{
				&fake{name: "a", goroutine: true},
				&fake{name: "b", goroutine: true, requires: []string{"a"}},
				tt.last,
			}
			var a, b *fakeExt
			list[2] = captureBefore{Installer: list[2], f: func() {
				a, _ = extension.Get[*fakeExt](h.reg, "a")
				b, _ = extension.Get[*fakeExt](h.reg, "b")
			}}

			err := h.reg.InstallAll(context.Background(), h, list)
			require.ErrorIs(t, err, extension.ErrInstall)
			if tt.sentinel != nil {
				require.ErrorIs(t, err, tt.sentinel)
			}
			var e *extension.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "c", e.Extension)
			assert.Equal(t, tt.op, e.Op)

			require.NotNil(t, a)
			require.NotNil(t, b)
			assert.True(t, a.stopped() && b.stopped(), "goroutines of rolled-back extensions have ended")
			assert.Empty(t, h.snapshot(), "nothing left in the host")
			ev := h.events()
			assert.Equal(t, []string{"shutdown b", "shutdown a"}, ev[len(ev)-2:])
			for n, want := range map[string]extension.State{"a": extension.Stopped, "b": extension.Stopped, "c": extension.Failed} {
				st, err := h.reg.Status(n)
				require.NoError(t, err)
				assert.Equal(t, want, st.State, n)
			}
			st, _ := h.reg.Status("c")
			assert.ErrorIs(t, st.Cause, extension.ErrInstall)
			assert.Equal(t, []string{"b:Stopped", "a:Stopped"}, sl.events()[len(sl.events())-2:])
			require.NoError(t, h.reg.ShutdownAll(context.Background()))
		})
	}
}

// captureBefore runs f before delegating Install.
type captureBefore struct {
	extension.Installer[*host]
	f func()
}

func (c captureBefore) Install(ctx context.Context, h *host) (extension.Extension, error) {
	c.f()
	return c.Installer.Install(ctx, h)
}

// nilInstaller returns neither an extension nor an error.
type nilInstaller struct{}

func (nilInstaller) Name() string       { return "c" }
func (nilInstaller) Requires() []string { return nil }
func (nilInstaller) Enabled() bool      { return true }
func (nilInstaller) Validate() error    { return nil }
func (nilInstaller) Install(context.Context, *host) (extension.Extension, error) {
	return nil, nil
}

func TestInstallAll_CancelledContextInstallsNothing(t *testing.T) {
	h := newHost()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := h.reg.InstallAll(ctx, h, installers(&fake{name: "a"}))
	require.ErrorIs(t, err, extension.ErrInstall)
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, h.events())
}

// A context cancelled during Install stops the rest and rolls back.
func TestInstallAll_CancelDuringInstall(t *testing.T) {
	h := newHost()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := h.reg.InstallAll(ctx, h, installers(
		&fake{name: "a", goroutine: true, onInstall: func(context.Context, *host) error { cancel(); return nil }},
		&fake{name: "b"},
	))
	require.ErrorIs(t, err, context.Canceled)
	var e *extension.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "b", e.Extension)
	assert.Equal(t, []string{"install a", "shutdown a"}, h.events())
}

// B1.3: a dependent's Install can look up what it requires; lookups are typed.
func TestLookup_Typed(t *testing.T) {
	h := newHost()
	var seen *fakeExt
	require.NoError(t, h.reg.InstallAll(context.Background(), h, installers(
		&fake{name: "cluster", requires: []string{"remote"}, onInstall: func(_ context.Context, h *host) error {
			r, err := extension.Lookup[*fakeExt](h.reg, "remote")
			seen = r
			return err
		}},
		&fake{name: "remote"},
	)))
	remote, ok := extension.Get[*fakeExt](h.reg, "remote")
	require.True(t, ok)
	assert.Same(t, seen, remote)
	assert.Equal(t, "remote", remote.name)

	_, err := extension.Lookup[*startExt](h.reg, "remote")
	require.ErrorIs(t, err, extension.ErrWrongType)
	assert.Contains(t, err.Error(), "*extension_test.fakeExt is not *extension_test.startExt")
	_, err = extension.Lookup[*fakeExt](h.reg, "nope")
	require.ErrorIs(t, err, extension.ErrNotInstalled)
	require.NoError(t, h.reg.ShutdownAll(context.Background()))
}

// Status, Statuses and Lookup may run concurrently with InstallAll (-race).
func TestStatus_ConcurrentReadsDuringInstall(t *testing.T) {
	h := newHost()
	entered, release := make(chan struct{}), make(chan struct{})
	list := installers(
		&fake{name: "a", goroutine: true},
		&fake{name: "b", onInstall: func(context.Context, *host) error {
			close(entered)
			<-release
			return nil
		}},
	)
	done := make(chan error, 1)
	go func() { done <- h.reg.InstallAll(context.Background(), h, list) }()

	stopReaders := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stopReaders:
					return
				default:
				}
				_ = h.reg.Statuses()
				_, _ = h.reg.Status("b")
				_, _ = extension.Get[*fakeExt](h.reg, "a")
			}
		})
	}

	<-entered
	st, err := h.reg.Status("b")
	require.NoError(t, err)
	assert.Equal(t, extension.Installing, st.State)
	st, _ = h.reg.Status("a")
	assert.Equal(t, extension.Ready, st.State)
	_, ok := extension.Get[*fakeExt](h.reg, "b")
	assert.False(t, ok, "not looked up before its Install returns")
	close(release)
	require.NoError(t, <-done)
	close(stopReaders)
	wg.Wait()

	st, _ = h.reg.Status("b")
	assert.Equal(t, extension.Ready, st.State)
	require.NoError(t, h.reg.ShutdownAll(context.Background()))
}

func TestError_Format(t *testing.T) {
	cause := errors.New("boom")
	e := &extension.Error{Extension: "remote", Op: extension.OpInstall, Err: errors.Join(extension.ErrInstall, cause)}
	assert.Equal(t, "install \"remote\": extension: install failed\nboom", e.Error())
	assert.ErrorIs(t, e, cause)
	assert.Equal(t, "Failed: boom", extension.Status{State: extension.Failed, Cause: cause}.String())
	assert.Equal(t, "State(99)", extension.State(99).String())
}
