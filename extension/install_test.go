package extension_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/extension"
)

// B1.1: installers are installed in requirement order, config order otherwise.
func TestInstallAll_Order(t *testing.T) {
	tests := []struct {
		name string
		list []*fake
		want []string
	}{
		{"independent keep config order",
			[]*fake{{name: "a"}, {name: "b"}, {name: "c"}},
			[]string{"a", "b", "c"}},
		{"cluster listed before the remote it requires",
			[]*fake{{name: "cluster", requires: []string{"remote"}}, {name: "remote"}},
			[]string{"remote", "cluster"}},
		{"independent ones keep their relative order",
			[]*fake{{name: "x"}, {name: "a", requires: []string{"c"}}, {name: "b"}, {name: "c"}},
			[]string{"x", "b", "c", "a"}},
		{"diamond",
			[]*fake{{name: "d", requires: []string{"b", "c"}}, {name: "b", requires: []string{"a"}}, {name: "c", requires: []string{"a"}}, {name: "a"}},
			[]string{"a", "b", "c", "d"}},
		{"repeated requirement",
			[]*fake{{name: "a", requires: []string{"b", "b"}}, {name: "b"}},
			[]string{"b", "a"}},
		{"disabled ones are skipped",
			[]*fake{{name: "a"}, {name: "off", disabled: true}, {name: "b"}},
			[]string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost()
			require.NoError(t, h.reg.InstallAll(context.Background(), h, installers(tt.list...)))
			var want []string
			for _, n := range tt.want {
				want = append(want, "install "+n)
				st, err := h.reg.Status(n)
				require.NoError(t, err)
				assert.Equal(t, extension.Ready, st.State)
			}
			assert.Equal(t, want, h.events())
			require.NoError(t, h.reg.ShutdownAll(context.Background()))
		})
	}
}

// B1.2: every check fails before anything is installed, with a typed error
// naming the installer, and the installers concerned are marked Failed.
func TestInstallAll_CheckErrors(t *testing.T) {
	cause := errors.New("port must be > 0")
	tests := []struct {
		name     string
		list     []*fake
		sentinel error
		ext      string   // the installer the first *Error names
		contains []string // in the message
		failed   []string // statuses Failed
	}{
		{"missing requirement",
			[]*fake{{name: "cluster", requires: []string{"remote"}}},
			extension.ErrMissingRequirement, "cluster", []string{`"cluster" requires "remote"`}, []string{"cluster"}},
		{"requirement disabled",
			[]*fake{{name: "remote", disabled: true}, {name: "cluster", requires: []string{"remote"}}},
			extension.ErrRequirementDisabled, "cluster", []string{`"cluster" requires "remote", which is disabled`}, []string{"cluster"}},
		{"cycle",
			[]*fake{{name: "d"}, {name: "a", requires: []string{"b"}}, {name: "b", requires: []string{"c"}}, {name: "c", requires: []string{"a"}}},
			extension.ErrCycle, "a", []string{"a -> b -> c -> a"}, []string{"a", "b", "c"}},
		{"self cycle",
			[]*fake{{name: "a", requires: []string{"a"}}},
			extension.ErrCycle, "a", []string{"a -> a"}, []string{"a"}},
		{"duplicate",
			[]*fake{{name: "a"}, {name: "b"}, {name: "a"}},
			extension.ErrDuplicate, "a", []string{"#0 and #2"}, nil},
		{"empty name",
			[]*fake{{name: ""}},
			extension.ErrValidation, "#0", []string{"empty name"}, nil},
		{"validation",
			[]*fake{{name: "a", goroutine: true}, {name: "cluster", validateErr: cause}},
			extension.ErrValidation, "cluster", []string{"port must be > 0"}, []string{"cluster"}},
		{"validation panics",
			[]*fake{{name: "a", panicOn: "validate"}},
			extension.ErrPanic, "a", []string{"validate exploded"}, []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost()
			err := h.reg.InstallAll(context.Background(), h, installers(tt.list...))
			require.ErrorIs(t, err, tt.sentinel)
			var e *extension.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tt.ext, e.Extension)
			for _, c := range tt.contains {
				assert.Contains(t, err.Error(), c)
			}
			assert.Empty(t, h.events(), "nothing may be installed when a check fails")
			assert.Empty(t, h.snapshot())
			for _, n := range tt.failed {
				st, err := h.reg.Status(n)
				require.NoError(t, err)
				assert.Equal(t, extension.Failed, st.State, n)
				assert.ErrorIs(t, st.Cause, tt.sentinel)
			}
			_, err = extension.Lookup[extension.Extension](h.reg, tt.ext)
			assert.ErrorIs(t, err, extension.ErrNotInstalled)
		})
	}
}

func TestInstallAll_ValidationKeepsCause(t *testing.T) {
	cause := errors.New("bad address")
	h := newHost()
	err := h.reg.InstallAll(context.Background(), h, installers(
		&fake{name: "remote", validateErr: cause},
		&fake{name: "cluster", validateErr: errors.New("no provider")},
	))
	require.ErrorIs(t, err, extension.ErrValidation)
	require.ErrorIs(t, err, cause)
	// Both problems are reported at once.
	assert.Contains(t, err.Error(), `validate "remote"`)
	assert.Contains(t, err.Error(), `validate "cluster": extension: invalid config: no provider`)
}

func TestInstallAll_NilInstaller(t *testing.T) {
	h := newHost()
	err := h.reg.InstallAll(context.Background(), h, []extension.Installer[*host]{&fake{name: "a"}, nil})
	require.ErrorIs(t, err, extension.ErrValidation)
	assert.Contains(t, err.Error(), "installer #1 is nil")
	assert.Empty(t, h.events())
}

// B1.4: a disabled installer creates nothing and leaves the host unchanged.
func TestInstallAll_DisabledLeavesHostUnchanged(t *testing.T) {
	h := newHost()
	f := &fake{name: "cluster", disabled: true, validateErr: errors.New("never validated"), goroutine: true}
	require.NoError(t, h.reg.InstallAll(context.Background(), h, installers(f)))
	assert.Empty(t, h.events())
	assert.Empty(t, h.snapshot())
	st, err := h.reg.Status("cluster")
	require.NoError(t, err)
	assert.Equal(t, extension.Status{State: extension.Disabled}, st)
	_, ok := extension.Get[extension.Extension](h.reg, "cluster")
	assert.False(t, ok)
	require.NoError(t, h.reg.ShutdownAll(context.Background()))
	st, _ = h.reg.Status("cluster")
	assert.Equal(t, extension.Disabled, st.State, "shutdown does not touch a disabled extension")
	assert.Empty(t, h.events())
}

func TestInstallAll_RunsOnce(t *testing.T) {
	h := newHost()
	require.NoError(t, h.reg.InstallAll(context.Background(), h, installers(&fake{name: "a"})))
	require.ErrorIs(t, h.reg.InstallAll(context.Background(), h, installers(&fake{name: "b"})), extension.ErrAlreadyInstalled)
	require.NoError(t, h.reg.ShutdownAll(context.Background()))
	require.ErrorIs(t, h.reg.InstallAll(context.Background(), h, nil), extension.ErrClosed)
	assert.Equal(t, []string{"install a", "shutdown a"}, h.events())
}

func TestInstallAll_ZeroRegistryAndEmptyList(t *testing.T) {
	var reg extension.Registry[*host]
	require.NoError(t, reg.InstallAll(context.Background(), newHost(), nil))
	assert.Empty(t, reg.Statuses())
	require.NoError(t, reg.ShutdownAll(context.Background()))
	require.NoError(t, reg.ShutdownAll(context.Background()))
}
