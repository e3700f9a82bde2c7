package remotebench

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// sysCPU is where Linux describes the machine's CPUs.
const sysCPU = "/sys/devices/system/cpu"

// cpuHalts returns how many times the machine's CPUs have entered an idle
// state that stops the CPU (every cpuidle state but the polling one),
// summed over all CPUs, as Linux counts them in sysfs; ok is false where
// that count is not available (another system, no cpuidle driver).
//
// It tells the regime a remote round trip was measured in. On a virtual
// machine whose guest does not poll before halting (haltpoll with
// guest_halt_poll_ns = 0), waking a thread on a halted vCPU costs tens of
// microseconds, more than the framework's work in a round trip, so the
// p50 of an idle machine follows the halts per round trip
// (docs/benchmarks.md, "Remote round trip on an idle machine"). The count
// is machine-wide: other processes' idle periods are in it too.
func cpuHalts() (n uint64, ok bool) { return cpuHaltsIn(sysCPU) }

// cpuHaltsIn is cpuHalts for a sysfs tree rooted at root (a test's copy).
func cpuHaltsIn(root string) (uint64, bool) {
	states, err := filepath.Glob(filepath.Join(root, "cpu[0-9]*", "cpuidle", "state[0-9]*"))
	if err != nil || len(states) == 0 {
		return 0, false
	}
	var n uint64
	for _, dir := range states {
		name, err := os.ReadFile(filepath.Join(dir, "name"))
		if err != nil {
			return 0, false
		}
		if strings.TrimSpace(string(name)) == "POLL" { // busy-polls: the CPU does not stop
			continue
		}
		usage, err := os.ReadFile(filepath.Join(dir, "usage"))
		if err != nil {
			return 0, false
		}
		u, err := strconv.ParseUint(strings.TrimSpace(string(usage)), 10, 64)
		if err != nil {
			return 0, false
		}
		n += u
	}
	return n, true
}
