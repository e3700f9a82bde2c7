package testkit_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/testkit"
)

// chaosFaults draws one fault per step from its PRNG. At least three
// members stay up; partitions and registry cuts heal on their own after a
// few steps (or earlier, by a heal step). A step that draws no fault from
// rng may draw one of the faults added since from later, a PRNG of its own
// (extra), and a step that draws none from later either may draw one of
// the timing faults from newer, a third (timing): the schedules of the
// seeds kept from before stay as they were.
type chaosFaults struct {
	tc      *testkit.TestCluster
	rng     *rand.Rand
	later   *rand.Rand
	newer   *rand.Rand
	beyondP bool
	counts  map[string]int
	parts   []chaosPart
	regCuts map[int]int // member → steps left
	// outage: the members a registry outage (extra) cut off, → steps
	// left; kept apart from regCuts, which rng's draws depend on.
	outage map[int]int
	// delays are the delayed links (timing), slowRegs the members with a
	// slow registry → steps left; drifted the members whose clock runs
	// beyond ρ → steps left (back within ρ then).
	delays   []chaosPart
	slowRegs map[int]int
	drifted  map[int]int
	// log is every fault applied, in order (logAround prints those near an
	// overlap).
	log []chaosEvent
}

// chaosEvent is one fault applied, at a time of the cluster's clock.
type chaosEvent struct {
	at   time.Time
	what string
}

// did counts a fault of kind and logs it with its detail.
func (f *chaosFaults) did(kind, format string, args ...any) {
	f.counts[kind]++
	f.log = append(f.log, chaosEvent{at: f.tc.Now(), what: kind + " " + fmt.Sprintf(format, args...)})
}

// logAround logs the faults applied from before to to.
func (f *chaosFaults) logAround(t *testing.T, from, to time.Time) {
	t.Helper()
	for _, e := range f.log {
		if !e.at.Before(from) && !e.at.After(to) {
			t.Logf("  fault at %s: %s", e.at.Format("15:04:05.000000"), e.what)
		}
	}
}

type chaosPart struct {
	from, to int
	oneWay   bool
	left     int
}

func newChaosFaults(tc *testkit.TestCluster, rng, later, newer *rand.Rand, beyondP bool, counts map[string]int) *chaosFaults {
	return &chaosFaults{tc: tc, rng: rng, later: later, newer: newer, beyondP: beyondP, counts: counts, regCuts: map[int]int{},
		outage: map[int]int{}, slowRegs: map[int]int{}, drifted: map[int]int{}}
}

func (f *chaosFaults) pick(xs []int) int { return xs[f.rng.IntN(len(xs))] }

func (f *chaosFaults) down() []int {
	var out []int
	for i := range f.tc.Len() {
		if f.tc.State(i) != testkit.MemberUp {
			out = append(out, i)
		}
	}
	return out
}

func (f *chaosFaults) healPart(k int) {
	p := f.parts[k]
	f.log = append(f.log, chaosEvent{at: f.tc.Now(), what: fmt.Sprintf("partition %d-%d healed", p.from, p.to)})
	f.parts = append(f.parts[:k], f.parts[k+1:]...)
	f.tc.Heal(p.from, p.to)
}

func (f *chaosFaults) step() {
	for k := len(f.parts) - 1; k >= 0; k-- {
		if f.parts[k].left--; f.parts[k].left <= 0 {
			f.healPart(k)
		}
	}
	for _, cuts := range []map[int]int{f.regCuts, f.outage} {
		for i, left := range cuts {
			if left <= 1 {
				delete(cuts, i)
				f.tc.HealRegistry(i)
			} else {
				cuts[i] = left - 1
			}
		}
	}
	f.ageTiming()
	up, down := f.tc.Up(), f.down()
	r := f.rng.IntN(100)
	switch {
	case r < 6 && len(up) > 3:
		i := f.pick(up)
		f.forget(i)
		f.tc.Kill(i)
		f.did("kill", "%d", i)
	case r < 14 && len(down) > 0:
		i := f.pick(down)
		f.tc.Restart(i)
		f.did("restart", "%d", i)
	case r < 17 && len(up) > 3:
		i := f.pick(up)
		f.forget(i)
		f.tc.Stop(i)
		f.did("stop", "%d", i)
	case r < 19 && f.tc.Len() < chaosMaxSlots:
		f.did("add", "%d", f.tc.AddNode())
	case r < 29 && len(up) > 1 && len(f.parts) < 3:
		i, j := f.two(up)
		f.tc.Partition(i, j)
		f.parts = append(f.parts, chaosPart{from: i, to: j, left: 1 + f.rng.IntN(15)})
		f.did("partition", "%d-%d", i, j)
	case r < 37 && len(up) > 1 && len(f.parts) < 3:
		i, j := f.two(up)
		f.tc.PartitionOneWay(i, j)
		f.parts = append(f.parts, chaosPart{from: i, to: j, oneWay: true, left: 1 + f.rng.IntN(15)})
		f.did("partition-one-way", "%d→%d", i, j)
	case r < 45 && len(f.regCuts) < 2:
		i := f.pick(up)
		if _, cut := f.regCuts[i]; !cut {
			f.tc.PartitionRegistry(i)
			f.regCuts[i] = 1 + f.rng.IntN(15)
			f.did("partition-registry", "%d", i)
		}
	case r < 52 && len(f.parts) > 0:
		k := f.rng.IntN(len(f.parts))
		f.did("heal", "%d-%d", f.parts[k].from, f.parts[k].to)
		f.healPart(k)
	case r < 55 && len(f.regCuts) > 0:
		// The lowest-numbered member cut off: a map's order made the
		// schedule of a seed differ from run to run.
		i := slices.Min(slices.Collect(maps.Keys(f.regCuts)))
		delete(f.regCuts, i)
		f.tc.HealRegistry(i)
		f.did("heal-registry", "%d", i)
	case r < 65:
		i, d := f.pick(up), time.Duration(10+f.rng.IntN(80))*time.Millisecond
		f.tc.Pause(i, d)
		f.did("pause-within-P", "%d %v", i, d)
	case r < 70 && f.beyondP:
		i, d := f.pick(up), time.Duration(300+f.rng.IntN(1200))*time.Millisecond
		f.tc.Pause(i, d)
		f.did("pause-beyond-P", "%d %v", i, d)
	default:
		f.extra(up)
	}
}

// extra draws, from its own PRNG, the faults added after seeds were kept
// (so their schedules stay): on a step that drew no fault, a connection
// reset one time in three (Disconnect), a registry outage one time in 30
// (every running member cut off the registry for 1 to 15 steps, as when
// the registry's servers are all unreachable: every member fences, then
// all rejoin as new incarnations at once), else none.
func (f *chaosFaults) extra(up []int) {
	x := f.later.IntN(30)
	switch {
	case x < 10 && len(up) > 1:
		i := f.later.IntN(len(up))
		j := (i + 1 + f.later.IntN(len(up)-1)) % len(up)
		f.tc.Disconnect(up[i], up[j])
		f.did("reset", "%d-%d", up[i], up[j])
	case x == 10:
		left := 1 + f.later.IntN(15)
		for _, i := range up {
			_, cut := f.regCuts[i]
			if _, out := f.outage[i]; !cut && !out {
				f.tc.PartitionRegistry(i)
				f.outage[i] = left
			}
		}
		f.did("registry-outage", "%d steps", left)
	default:
		f.timing(up)
	}
}

// Timing faults (timing). Within bounds they keep the single-activation
// guarantee (chaosRegistry: F 400 ms, R 100 ms, S 100 ms, ρ 0.01):
// clock rates within 1 ± ρ, registry latency under F − R − S = 200 ms (so
// no member fences for it, drift and a late timer aside), link latency
// under the attempt timeout's half. Beyond bounds (beyond-P runs only):
// rates off by 5 to 30 % for a few steps, registry latency of 200 to
// 800 ms (members fence), link latency of 150 to 600 ms.
const (
	chaosRegLatency     = 150 * time.Millisecond
	chaosLinkLatency    = 150 * time.Millisecond
	chaosMaxLinkDelays  = 3
	chaosBeyondRateMin  = 0.05
	chaosBeyondRateSpan = 0.25
)

// timing draws, from newer, on a step that drew no fault from rng or
// later: a clock-rate change three times in ten, a slow registry two
// times in ten (for 1 to 15 steps), a delayed link (one way or both, for
// 1 to 15 steps) three times in ten, else none. In beyond-P runs each of
// them is beyond bounds one time in two.
func (f *chaosFaults) timing(up []int) {
	y := f.newer.IntN(10)
	beyond := f.beyondP && f.newer.IntN(2) == 0
	suffix := ""
	if beyond {
		suffix = "-beyond"
	}
	switch {
	case y < 3 && len(up) > 0:
		i := up[f.newer.IntN(len(up))]
		rho := cluster.DefaultConfig().ClockDrift
		rate := 1 + rho*(2*f.newer.Float64()-1)
		if beyond {
			dev := chaosBeyondRateMin + chaosBeyondRateSpan*f.newer.Float64()
			if f.newer.IntN(2) == 0 {
				dev = -dev
			}
			rate = 1 + dev
			f.drifted[i] = 1 + f.newer.IntN(15)
		} else {
			delete(f.drifted, i)
		}
		if !f.timingOn("drift") {
			delete(f.drifted, i)
			f.counts["timing-off"]++
			return
		}
		f.tc.SetClockRate(i, rate)
		f.did("clock-drift"+suffix, "%d rate %.4f", i, rate)
	case y < 5 && len(up) > 0:
		i := up[f.newer.IntN(len(up))]
		d := 10*time.Millisecond + time.Duration(f.newer.Int64N(int64(chaosRegLatency-10*time.Millisecond)))
		if beyond {
			d = 200*time.Millisecond + time.Duration(f.newer.Int64N(int64(600*time.Millisecond)))
		}
		left := 1 + f.newer.IntN(15)
		if !f.timingOn("registry") {
			f.counts["timing-off"]++
			return
		}
		f.tc.SlowRegistry(i, d)
		f.slowRegs[i] = left
		f.did("slow-registry"+suffix, "%d %v for %d steps", i, d, f.slowRegs[i])
	case y < 8 && len(up) > 1 && len(f.delays) < chaosMaxLinkDelays:
		i := f.newer.IntN(len(up))
		j := (i + 1 + f.newer.IntN(len(up)-1)) % len(up)
		d := 5*time.Millisecond + time.Duration(f.newer.Int64N(int64(chaosLinkLatency-5*time.Millisecond)))
		if beyond {
			d = 150*time.Millisecond + time.Duration(f.newer.Int64N(int64(450*time.Millisecond)))
		}
		p := chaosPart{from: up[i], to: up[j], oneWay: f.newer.IntN(2) == 0, left: 1 + f.newer.IntN(15)}
		if !f.timingOn("link") {
			f.counts["timing-off"]++
			return
		}
		if p.oneWay {
			f.tc.DelayLinkOneWay(p.from, p.to, d)
			f.did("link-delay-one-way"+suffix, "%d→%d %v for %d steps", p.from, p.to, d, p.left)
		} else {
			f.tc.DelayLink(p.from, p.to, d)
			f.did("link-delay"+suffix, "%d-%d %v for %d steps", p.from, p.to, d, p.left)
		}
		f.delays = append(f.delays, p)
	default:
		f.counts["none"]++
	}
}

// timingOn reports whether -chaos.timing applies the timing faults of kind.
func (f *chaosFaults) timingOn(kind string) bool {
	return slices.Contains(strings.Split(*chaosTiming, ","), kind)
}

// ageTiming ends the timing faults whose steps ran out: a delayed link is
// lifted, a slow registry answers at once again, a clock beyond ρ runs at
// 1 again (keeping its offset).
func (f *chaosFaults) ageTiming() {
	for k := len(f.delays) - 1; k >= 0; k-- {
		if f.delays[k].left--; f.delays[k].left <= 0 {
			f.liftDelay(k)
		}
	}
	for i, left := range f.slowRegs {
		if left > 1 {
			f.slowRegs[i] = left - 1
			continue
		}
		delete(f.slowRegs, i)
		f.tc.SlowRegistry(i, 0)
		f.log = append(f.log, chaosEvent{at: f.tc.Now(), what: fmt.Sprintf("slow-registry %d ends", i)})
	}
	for i, left := range f.drifted {
		if left > 1 {
			f.drifted[i] = left - 1
			continue
		}
		delete(f.drifted, i)
		f.tc.SetClockRate(i, 1)
		f.log = append(f.log, chaosEvent{at: f.tc.Now(), what: fmt.Sprintf("clock-drift %d back to 1", i)})
	}
}

func (f *chaosFaults) liftDelay(k int) {
	p := f.delays[k]
	f.log = append(f.log, chaosEvent{at: f.tc.Now(), what: fmt.Sprintf("link-delay %d-%d lifted", p.from, p.to)})
	f.delays = append(f.delays[:k], f.delays[k+1:]...)
	if p.oneWay {
		f.tc.DelayLinkOneWay(p.from, p.to, 0)
	} else {
		f.tc.DelayLink(p.from, p.to, 0)
	}
}

// two returns two distinct members of up.
func (f *chaosFaults) two(up []int) (int, int) {
	i := f.rng.IntN(len(up))
	j := (i + 1 + f.rng.IntN(len(up)-1)) % len(up)
	return up[i], up[j]
}

// forget drops the faults of a member that goes down (a restart starts
// clean; its clock keeps its rate, back within ρ).
func (f *chaosFaults) forget(i int) {
	for k := len(f.delays) - 1; k >= 0; k-- {
		if p := f.delays[k]; p.from == i || p.to == i {
			f.liftDelay(k)
		}
	}
	delete(f.slowRegs, i)
	if _, ok := f.drifted[i]; ok {
		delete(f.drifted, i)
		f.tc.SetClockRate(i, 1)
	}
	for k := len(f.parts) - 1; k >= 0; k-- {
		if p := f.parts[k]; p.from == i || p.to == i {
			f.healPart(k)
		}
	}
	for _, cuts := range []map[int]int{f.regCuts, f.outage} {
		if _, ok := cuts[i]; ok {
			delete(cuts, i)
			f.tc.HealRegistry(i)
		}
	}
}

// healAll ends every fault: partitions, registry cuts, pauses and the
// timing faults (every clock runs at 1 again, keeping its offset).
func (f *chaosFaults) healAll() {
	for len(f.delays) > 0 {
		f.liftDelay(0)
	}
	for i := range f.slowRegs {
		delete(f.slowRegs, i)
		f.tc.SlowRegistry(i, 0)
	}
	clear(f.drifted)
	for i := range f.tc.Len() {
		if f.tc.ClockRate(i) != 1 {
			f.tc.SetClockRate(i, 1)
		}
	}
	for len(f.parts) > 0 {
		f.healPart(0)
	}
	for _, cuts := range []map[int]int{f.regCuts, f.outage} {
		for i := range cuts {
			delete(cuts, i)
			f.tc.HealRegistry(i)
		}
	}
	for _, i := range f.tc.Up() {
		f.tc.Resume(i)
	}
}
