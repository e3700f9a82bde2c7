package remotebench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeState writes one cpuidle state of a fake sysfs tree.
func writeState(t *testing.T, root, cpu, state, name, usage string) {
	t.Helper()
	dir := filepath.Join(root, cpu, "cpuidle", state)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "name"), []byte(name+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "usage"), []byte(usage+"\n"), 0o644))
}

func TestCPUHaltsCountsHaltingStatesOnly(t *testing.T) {
	root := t.TempDir()
	writeState(t, root, "cpu0", "state0", "POLL", "1000")
	writeState(t, root, "cpu0", "state1", "haltpoll idle", "7")
	writeState(t, root, "cpu1", "state0", "POLL", "2000")
	writeState(t, root, "cpu1", "state1", "haltpoll idle", "5")
	writeState(t, root, "cpu1", "state2", "C6", "3")
	n, ok := cpuHaltsIn(root)
	require.True(t, ok)
	require.Equal(t, uint64(15), n, "every state but POLL, over every CPU")
}

func TestCPUHaltsUnavailable(t *testing.T) {
	_, ok := cpuHaltsIn(t.TempDir())
	require.False(t, ok, "no cpuidle states")

	root := t.TempDir()
	writeState(t, root, "cpu0", "state1", "haltpoll idle", "not a number")
	_, ok = cpuHaltsIn(root)
	require.False(t, ok, "an unreadable count")
}
