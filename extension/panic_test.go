package extension_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/extension"
)

// explosive is an installer whose Name, Requires or Enabled panics.
type explosive struct {
	fake
	on string
}

func (e *explosive) Name() string {
	if e.on == "name" {
		panic("name exploded")
	}
	return e.fake.Name()
}

func (e *explosive) Requires() []string {
	if e.on == "requires" {
		panic("requires exploded")
	}
	return e.fake.Requires()
}

func (e *explosive) Enabled() bool {
	if e.on == "enabled" {
		panic("enabled exploded")
	}
	return e.fake.Enabled()
}

// TestInstallAll_InstallerQueryPanics: a panic in an installer's Name,
// Requires or Enabled fails InstallAll with ErrPanic, as one in Validate
// does, before anything is installed; it does not crash the caller.
func TestInstallAll_InstallerQueryPanics(t *testing.T) {
	for _, on := range []string{"name", "requires", "enabled"} {
		t.Run(on, func(t *testing.T) {
			h := newHost()
			list := []extension.Installer[*host]{&fake{name: "a"}, &explosive{fake: fake{name: "b"}, on: on}}
			var err error
			require.NotPanics(t, func() { err = h.reg.InstallAll(context.Background(), h, list) })
			require.ErrorIs(t, err, extension.ErrPanic)
			require.ErrorIs(t, err, extension.ErrValidation)
			assert.Contains(t, err.Error(), on+" exploded")
			assert.Empty(t, h.events(), "nothing installed")
			_, ok := extension.Get[*fakeExt](h.reg, "a")
			assert.False(t, ok)
			if on != "name" { // without a name there is no status to record
				st, err := h.reg.Status("b")
				require.NoError(t, err)
				assert.Equal(t, extension.Failed, st.State)
				assert.ErrorIs(t, st.Cause, extension.ErrPanic)
			}
			require.NoError(t, h.reg.ShutdownAll(context.Background()))
		})
	}
}
