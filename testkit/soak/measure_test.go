package soak_test

import (
	"fmt"
	"maps"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// checkpoint is what the process holds after a round, once it is quiet.
type checkpoint struct {
	round      int
	at         time.Time
	goroutines int
	byCreator  map[string]int // goroutines by the function that started them
	heapLive   uint64         // /gc/heap/live:bytes after two GCs
	heapInUse  uint64         // /memory/classes/heap/objects:bytes
	shut, kept int            // systems shut down so far, and how many of them are still reachable
	members    []memberGauges
}

// memberGauges are one member's own counts of what it holds.
type memberGauges struct {
	id          string
	processes   int   // actor registry entries
	endpoints   int   // remote endpoints (peer addresses with state)
	connections int64 // established connections
	pidCache    int
	active      int // grain activations
}

func (g memberGauges) String() string {
	return fmt.Sprintf("%s: processes %d, endpoints %d, connections %d, pidcache %d, active %d",
		g.id, g.processes, g.endpoints, g.connections, g.pidCache, g.active)
}

// quiesce waits until nothing of the churn is in flight: abandoned futures
// timed out, every grain passivated, and every pair of members connected
// (a request from each member to each other's echo actor).
func (h *harness) quiesce() {
	h.t.Helper()
	h.awaitAbandoned()
	testkit.Eventually(h.t, func() bool {
		for _, m := range h.members {
			if m.c.ActiveCount() != 0 {
				return false
			}
		}
		return true
	}, 30*time.Second, "grains did not passivate")
	for _, a := range h.members {
		for _, b := range h.members {
			if a == b {
				continue
			}
			h.ping(a, b)
		}
	}
	testkit.Eventually(h.t, func() bool {
		for _, m := range h.members {
			if m.node.Stats().Connections != int64(len(h.members)-1) {
				return false
			}
		}
		return true
	}, 30*time.Second, "members did not settle on one connection per peer")
}

func (h *harness) checkpoint(round int) checkpoint {
	h.t.Helper()
	h.quiesce()
	runtime.GC()
	runtime.GC()
	cp := checkpoint{round: round, at: time.Now(), goroutines: runtime.NumGoroutine(), byCreator: goroutinesByCreator()}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	cp.heapLive, cp.heapInUse = s[0].Value.Uint64(), s[1].Value.Uint64()
	cp.shut, cp.kept = len(h.shut), h.reachable()
	for _, m := range h.members {
		st := m.node.Stats()
		cp.members = append(cp.members, memberGauges{
			id: m.id, processes: m.sys.ProcessCount(), endpoints: st.Endpoints, connections: st.Connections,
			pidCache: m.c.PidCache().Len(), active: m.c.ActiveCount(),
		})
	}
	return cp
}

// goroutinesByCreator counts the goroutines by the function that started
// them ("created by" in their stacks; the top function for those without).
func goroutinesByCreator() map[string]int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]int{}
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		lines := strings.Split(strings.TrimSpace(g), "\n")
		if len(lines) < 2 {
			continue
		}
		key := lines[1]
		for _, l := range lines {
			if f, ok := strings.CutPrefix(l, "created by "); ok {
				key = f
				break
			}
		}
		if i := strings.Index(key, " in goroutine"); i >= 0 {
			key = key[:i]
		}
		out[key]++
	}
	return out
}

// growth lists the creators with more goroutines in b than in a.
func growth(a, b map[string]int) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(b)) {
		if d := b[k] - a[k]; d > 0 {
			out = append(out, fmt.Sprintf("+%d %s", d, k))
		}
	}
	return out
}

func (cp checkpoint) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "after round %d: %d goroutines, live heap %.2f MB, heap objects %.2f MB, %d of %d stopped systems still reachable",
		cp.round, cp.goroutines, float64(cp.heapLive)/1e6, float64(cp.heapInUse)/1e6, cp.kept, cp.shut)
	for _, g := range cp.members {
		fmt.Fprintf(&b, "\n    %s", g)
	}
	return b.String()
}

// ping asks b's echo actor from a until it answers: a request that went
// out on a connection that was just reset is lost with it (the future
// fails with the connection's error), and the next one reconnects.
func (h *harness) ping(a, b *member) {
	h.t.Helper()
	var err error
	for range 10 {
		pid := actor.NewPID(b.sys.Address(), b.echo.ID)
		if _, err = a.sys.Root().RequestFuture(pid, &ping{}, 5*time.Second).Result(); err == nil {
			return
		}
	}
	h.t.Fatalf("soak: %s → %s: %v", a.id, b.id, err)
}
