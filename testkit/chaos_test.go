package testkit_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// The chaos test: a seeded PRNG drives random faults over a five-member
// TestCluster while callers on every member send requests with unique IDs
// to chaosIdentities counters, whose grains keep their state in a
// FencedStore. `make chaos` runs a longer random campaign.
var (
	chaosSeed    = flag.Uint64("chaos.seed", 0, "replay this chaos seed (0: the fixed seeds)")
	chaosSteps   = flag.Int("chaos.steps", 1000, "fault steps per chaos run")
	chaosRandom  = flag.Int("chaos.random", 0, "run this many random seeds instead of the fixed ones")
	chaosBeyondP = flag.Bool("chaos.beyondp", false, "with -chaos.seed or -chaos.random: runs with pauses beyond P")
	chaosReach   = flag.Bool("chaos.reach", false, "turn the reachability vote on (cluster.Config.Reachability: After 100ms)")
	chaosTiming  = flag.String("chaos.timing", "drift,registry,link",
		"the timing faults applied (drawn all the same, so the schedule stays): any of drift, registry, link, comma-separated, or none")
)

// chaosSeeds run in `make test`; chaosBeyondPSeeds add pauses beyond P on
// purpose (overlaps allowed there, stale writes not) and end with a fence
// episode (chaosFenceEpisode).
var (
	// 7824330833246463690 found a restarted member activating a grain that
	// still ran on a member which had left just before the restart (the
	// run is not deterministic, so TestPlacementCoreAckWaitsOutDepartures
	// in cluster/ pins the fix; the seed stays as a second line of defence).
	chaosSeeds        = []uint64{1, 2, 7824330833246463690}
	chaosBeyondPSeeds = []uint64{3}
)

const (
	chaosMembers    = 5
	chaosMaxSlots   = 7
	chaosIdentities = 2000
	chaosCallers    = 3 // per member slot
	chaosPerStep    = 2 // request completions between two fault steps
	// chaosMinAckedShare: at least 1 request in this many must be
	// acknowledged, but in the beyond-P run (the fixed seeds acknowledge 2
	// in 5 or more, once 1 in 3; the beyond-P run 1 in 9 or more, of
	// fewer requests).
	chaosMinAckedShare = 10
	// chaosSettleBudget: after the heal, every counter must answer a read
	// within this (chaosSettle).
	chaosSettleBudget = 30 * time.Second
)

// chaosRegistry is the lease timing the chaos test and its campaigns run
// under (docs/cluster.md): 200 ms of slack (FastRegistry's earlier
// timing), not the testkit's default. Tight bounds put more expiries,
// fences and wait-outs into each step, and a member that fences because
// its renewals ran late under load is one more fault whose outcome the
// test checks, not a flake: it asserts no overlap, no stale write and
// linearizable histories, never that a member stayed up.
var chaosRegistry = cluster.MemoryConfig{LeaseTTL: 600 * time.Millisecond, RenewInterval: 100 * time.Millisecond,
	FencePeriod: 400 * time.Millisecond}

// Messages of the chaos counter.
type (
	chaosAdd struct {
		ID   string
		Gate bool // the beyond-P run's fence episode: wait at chaosGate before writing
	}
	chaosRead struct{}
	chaosVal  struct{ N int }
)

// counterState is a chaos counter's stored state: the total and the
// requests applied (ID → total after it), for deduplication.
type counterState struct {
	N       int
	Applied map[string]int
}

// chaosGate holds a gated add (the beyond-P run's fence episode) between
// computing its state and writing it: entered when it got there, release
// to go on, written with the write's outcome.
type chaosGate struct {
	entered, release chan struct{}
	written          chan error
}

// chaosKind is the counter grain: it claims its token when it starts,
// deduplicates adds by request ID, writes through the FencedStore before
// it replies (reads too, so a superseded activation answers nothing) and
// stops when the store refuses it (counted in refusedWrites).
func chaosKind(store *testkit.FencedStore[counterState], obs func() *testkit.Observer, refusedWrites *atomic.Int64, gate *chaosGate) cluster.Kind {
	return cluster.NewKind("chaos", actor.PropsFromProducer(func() actor.Actor {
		var st counterState
		return actor.ReceiveFunc(func(c actor.Context) {
			id, _ := cluster.IdentityOf(c)
			tok, _ := cluster.FencingTokenOf(c)
			switch m := c.Message().(type) {
			case *actor.Started:
				if err := store.Claim(id, tok); err != nil {
					c.Stop(c.Self())
					return
				}
				st, _ = store.Load(id)
			case *chaosAdd:
				if v, ok := st.Applied[m.ID]; ok {
					c.Respond(&chaosVal{N: v}) // a retry of an applied request
					return
				}
				next := counterState{N: st.N + 1, Applied: maps.Clone(st.Applied)}
				if next.Applied == nil {
					next.Applied = map[string]int{}
				}
				next.Applied[m.ID] = next.N
				if m.Gate {
					select { // never blocks, should the add arrive twice
					case gate.entered <- struct{}{}:
					default:
					}
					<-gate.release
				}
				err := store.Write(id, tok, next)
				if m.Gate {
					select {
					case gate.written <- err:
					default:
					}
				}
				if err != nil {
					refusedWrites.Add(1)
					c.Stop(c.Self())
					return
				}
				st = next
				obs().Ack(c, m.ID)
				c.Respond(&chaosVal{N: st.N})
			case *chaosRead:
				if err := store.Write(id, tok, st); err != nil {
					refusedWrites.Add(1)
					c.Stop(c.Self())
					return
				}
				c.Respond(&chaosVal{N: st.N})
			}
		})
	}))
}

// chaosOp is one request of the history.
type chaosOp struct {
	id        cluster.Identity
	reqID     string // "" for a read
	ok        bool
	out       int
	call, ret int64
}

type chaosStats struct {
	steps    int
	faults   map[string]int
	requests int
	acked    int
	failed   int
}

func TestChaos(t *testing.T) {
	switch {
	case *chaosSeed != 0:
		t.Run(fmt.Sprintf("seed=%d", *chaosSeed), func(t *testing.T) { runChaos(t, *chaosSeed, *chaosBeyondP) })
	case *chaosRandom > 0:
		name := "seed=%d"
		if *chaosBeyondP {
			name = "beyondP/seed=%d"
		}
		for range *chaosRandom {
			seed := rand.Uint64()
			t.Run(fmt.Sprintf(name, seed), func(t *testing.T) { runChaos(t, seed, *chaosBeyondP) })
		}
	default:
		if testing.Short() {
			t.Skip("chaos runs without -short")
		}
		for _, seed := range chaosSeeds {
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runChaos(t, seed, false) })
		}
		for _, seed := range chaosBeyondPSeeds {
			t.Run(fmt.Sprintf("beyondP/seed=%d", seed), func(t *testing.T) { runChaos(t, seed, true) })
		}
	}
}

func runChaos(t *testing.T, seed uint64, beyondP bool) {
	t.Cleanup(func() {
		if t.Failed() {
			extra := ""
			if beyondP {
				extra = " -chaos.beyondp"
			}
			if *chaosReach {
				extra += " -chaos.reach"
			}
			t.Logf("chaos: failed with seed %d; replay its schedule with: go test -race -run TestChaos ./testkit/ -chaos.seed=%d -chaos.steps=%d%s",
				seed, seed, *chaosSteps, extra)
		}
	})
	began := time.Now()
	var tcp atomic.Pointer[testkit.TestCluster]
	store := testkit.NewFencedStore[counterState](func() time.Time { return tcp.Load().Now() })
	var randN atomic.Uint64
	var refusedWrites atomic.Int64
	gate := &chaosGate{entered: make(chan struct{}, 1), release: make(chan struct{}), written: make(chan error, 1)}
	tc := testkit.NewCluster(t, testkit.Nodes(chaosMembers), testkit.Registry(chaosRegistry),
		testkit.Kinds(chaosKind(store, func() *testkit.Observer { return tcp.Load().Observer() }, &refusedWrites, gate)),
		testkit.Serializers(func(s *remote.Serializers) error {
			for _, err := range []error{
				remote.RegisterJSON[*chaosAdd](s, "chaos.add"),
				remote.RegisterJSON[*chaosRead](s, "chaos.read"),
				remote.RegisterJSON[*chaosVal](s, "chaos.val"),
			} {
				if err != nil {
					return err
				}
			}
			return nil
		}),
		testkit.ConfigureCluster(func(c *cluster.Config) {
			c.Rand = rand.NewPCG(seed, randN.Add(1))
			if *chaosReach {
				c.Reachability = cluster.ReachabilityConfig{After: 100 * time.Millisecond}
			}
		}))
	tcp.Store(tc)
	obs := tc.Observer()
	released := false
	release := func() {
		if !released {
			released = true
			close(gate.release)
		}
	}
	t.Cleanup(release) // before the cluster's cleanup: a gated grain holds a worker

	// Callers: chaosCallers per slot, each on the member of its slot while
	// that member runs and is not paused, on another running one otherwise.
	var (
		histMu   sync.Mutex
		history  []chaosOp
		reqSeq   atomic.Uint64
		errCount atomic.Int64
	)
	done := make(chan struct{}, 1024)
	stop := make(chan struct{})
	var callers sync.WaitGroup
	for k := range chaosMaxSlots * chaosCallers {
		callers.Add(1)
		go func() {
			defer callers.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(1000+k)))
			for {
				select {
				case <-stop:
					return
				default:
				}
				node, ok := chaosPickNode(tc, k/chaosCallers, rng)
				if !ok {
					select {
					case <-stop:
						return
					case done <- struct{}{}:
					}
					continue
				}
				id := cluster.NewIdentity("chaos", fmt.Sprint(rng.IntN(chaosIdentities)))
				op := chaosOp{id: id}
				var msg any = &chaosRead{}
				if rng.IntN(10) < 7 {
					op.reqID = fmt.Sprintf("r%d", reqSeq.Add(1))
					msg = &chaosAdd{ID: op.reqID}
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				op.call = tc.Now().UnixNano()
				v, err := cluster.Request[*chaosVal](ctx, node, id, msg)
				op.ret = tc.Now().UnixNano()
				cancel()
				if err == nil {
					op.ok, op.out = true, v.N
				} else if errCount.Add(1) <= 5 {
					t.Logf("chaos: request failed: %v", err)
				}
				histMu.Lock()
				history = append(history, op)
				histMu.Unlock()
				select {
				case done <- struct{}{}:
				case <-stop:
					return
				}
			}
		}()
	}

	stats := chaosStats{faults: map[string]int{}}
	faults := newChaosFaults(tc, rand.New(rand.NewPCG(seed, 1)), rand.New(rand.NewPCG(seed, 2)), rand.New(rand.NewPCG(seed, 3)), beyondP, stats.faults)
	for step := 0; step < *chaosSteps; step++ {
		for range chaosPerStep {
			<-done
		}
		faults.step()
		stats.steps++
	}
	close(stop)
	callers.Wait()
	faults.healAll()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tc.AwaitConverged(ctx); err != nil {
		t.Errorf("chaos: %v", err)
	}
	var settled []chaosOp // the reads after the heal: checked with the history, not counted in its stats
	if !t.Failed() {
		settled = chaosSettle(t, tc, history)
	}
	if beyondP {
		history = append(history, chaosFenceEpisode(t, tc, gate, release)...)
	}

	// Checks.
	if !beyondP {
		obs.AssertNoOverlap(t)
		for k, o := range obs.Overlaps() {
			if k == 3 {
				break
			}
			logOverlap(t, obs, faults, o)
		}
	}
	obs.AssertTokensMonotonic(t)
	stale := obs.StaleWrites(store.Writes())
	for _, w := range stale {
		t.Errorf("chaos: stale write accepted: %s token %v", w.Identity, w.Token)
	}
	ackCount := map[string]int{}
	for _, a := range obs.Acks() {
		ackCount[a.RequestID]++
		if ackCount[a.RequestID] == 2 {
			t.Errorf("chaos: request %s acknowledged twice (%s)", a.RequestID, a.Identity)
		}
	}
	lost := 0
	for _, op := range history {
		stats.requests++
		if !op.ok {
			stats.failed++
			continue
		}
		stats.acked++
		if op.reqID == "" {
			continue
		}
		st, _ := store.Load(op.id)
		if _, ok := st.Applied[op.reqID]; !ok {
			t.Errorf("chaos: acknowledged add %s to %s was not applied", op.reqID, op.id)
			if lost++; lost <= 3 {
				logLostAdd(t, obs, store, op)
			}
		}
	}
	// The checks above look only at what was acknowledged: a run in which
	// (nearly) every request failed passes them all, as a cluster that
	// answered nothing would. The beyond-P run, whose members are often
	// all paused, must acknowledge some.
	if stats.acked == 0 || !beyondP && stats.acked*chaosMinAckedShare < stats.requests {
		t.Errorf("chaos: %d of %d requests acknowledged: too few to check", stats.acked, stats.requests)
	}
	for _, id := range store.Identities() {
		st, _ := store.Load(id)
		if st.N != len(st.Applied) {
			t.Errorf("chaos: %s holds %d after %d distinct adds: an add was applied twice or lost", id, st.N, len(st.Applied))
		}
	}
	checkLinearizable(t, append(history, settled...))

	overlaps := obs.Overlaps()
	// The beyond-P run must have exercised the fence (its episode makes
	// sure it did), else its stale-write check above proved nothing.
	if beyondP && (len(overlaps) == 0 || refusedWrites.Load() == 0) {
		t.Errorf("chaos: the beyond-P run had %d overlaps and %d refused writes: the fence was not exercised",
			len(overlaps), refusedWrites.Load())
	}
	faultNames := make([]string, 0, len(stats.faults))
	for k, n := range stats.faults {
		faultNames = append(faultNames, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(faultNames)
	t.Logf("chaos summary: seed %d beyondP %v reach %v: steps %d in %v; faults %s; requests %d (acknowledged %d, failed %d); activations %d; overlaps %d; stale writes accepted %d (refused %d, claims and writes %d); observer dropped %d",
		seed, beyondP, *chaosReach, stats.steps, time.Since(began).Round(time.Millisecond), strings.Join(faultNames, " "),
		stats.requests, stats.acked, stats.failed, len(obs.Activations()), len(overlaps), len(stale), refusedWrites.Load(), store.Refused(), obs.Dropped())
}

// chaosPickNode returns the member of slot, or another running one when it
// is down or paused.
func chaosPickNode(tc *testkit.TestCluster, slot int, rng *rand.Rand) (*cluster.Cluster, bool) {
	if slot < tc.Len() && tc.State(slot) == testkit.MemberUp && !tc.Paused(slot) {
		return tc.Node(slot), true
	}
	up := tc.Up()
	var ok []int
	for _, i := range up {
		if !tc.Paused(i) {
			ok = append(ok, i)
		}
	}
	if len(ok) == 0 {
		return nil, false
	}
	return tc.Node(ok[rng.IntN(len(ok))]), true
}

// checkLinearizable checks each counter's history with porcupine. A counter
// is a range of possible values: an add whose outcome is unknown (it
// failed: it may or may not have been applied) widens it.
func checkLinearizable(t *testing.T, history []chaosOp) {
	type rng struct{ lo, hi int }
	ops := make([]porcupine.Operation, 0, len(history))
	for i, op := range history {
		if !op.ok && op.reqID == "" {
			continue // a failed read tells nothing
		}
		ret := op.ret
		if !op.ok {
			ret = math.MaxInt64
		}
		ops = append(ops, porcupine.Operation{ClientId: i, Input: op, Call: op.call, Output: op, Return: ret})
	}
	model := porcupine.Model{
		Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
			by := map[cluster.Identity][]porcupine.Operation{}
			for _, o := range h {
				id := o.Input.(chaosOp).id
				by[id] = append(by[id], o)
			}
			out := make([][]porcupine.Operation, 0, len(by))
			for _, p := range by {
				out = append(out, p)
			}
			return out
		},
		Init: func() any { return rng{} },
		Step: func(state, input, _ any) (bool, any) {
			s, op := state.(rng), input.(chaosOp)
			switch {
			case op.reqID != "" && !op.ok:
				return true, rng{s.lo, s.hi + 1}
			case op.reqID != "":
				return op.out >= s.lo+1 && op.out <= s.hi+1, rng{op.out, op.out}
			default:
				return op.out >= s.lo && op.out <= s.hi, rng{op.out, op.out}
			}
		},
		DescribeOperation: func(input, _ any) string {
			op := input.(chaosOp)
			if op.reqID == "" {
				return fmt.Sprintf("read %s → %d", op.id, op.out)
			}
			return fmt.Sprintf("add %s %s ok=%v → %d", op.id, op.reqID, op.ok, op.out)
		},
	}
	res := porcupine.CheckOperationsTimeout(model, ops, time.Minute)
	switch res {
	case porcupine.Illegal:
		t.Errorf("chaos: a counter's history is not linearizable")
	case porcupine.Unknown:
		t.Logf("chaos: linearizability check timed out")
	}
}

// logLostAdd logs what the observer and the store saw of an acknowledged
// add the store does not hold: who acknowledged it (member, token, time),
// every activation of the identity and every write the store accepted for
// it, so a failing seed shows which activations wrote over it.
func logLostAdd(t *testing.T, obs *testkit.Observer, store *testkit.FencedStore[counterState], op chaosOp) {
	t.Helper()
	for _, a := range obs.Acks() {
		if a.RequestID == op.reqID {
			t.Logf("  %s acknowledged by %s on %s token %v at %s (call %d, return %d)", op.reqID, a.Identity, a.Member, a.Token,
				a.At.Format("15:04:05.000000"), op.call, op.ret)
		}
	}
	for _, a := range obs.Activations() {
		if a.Identity == op.id {
			t.Logf("  activation %v", a)
		}
	}
	for _, w := range store.Writes() {
		if w.Identity == op.id {
			t.Logf("  write token %v at %s", w.Token, w.At.Format("15:04:05.000000"))
		}
	}
}

// logOverlap logs what led to an overlap: every activation of its
// identity, and the faults applied from 5 s before it began to its end.
func logOverlap(t *testing.T, obs *testkit.Observer, faults *chaosFaults, o testkit.Overlap) {
	t.Helper()
	t.Logf("overlap of %s:", o.A.Identity)
	for _, a := range obs.Activations() {
		if a.Identity == o.A.Identity {
			t.Logf("  activation %v", a)
		}
	}
	to := o.To
	if to.IsZero() {
		to = time.Now().Add(time.Hour)
	}
	faults.logAround(t, o.From.Add(-5*time.Second), to)
}

// chaosFenceEpisode is the beyond-P run's certain stale write (see
// fenceEpisode): in 1,000 random steps a superseded activation never came
// to write (0 overlaps and 0 refused writes in the beyond-P runs measured;
// likely because a member paused beyond P stops its grains on its first
// tick after the resume, while a handler the pause caught in the middle
// does write), so the run's "no stale write accepted" could not fail. After the random steps, an add to a fresh
// counter is held before its write while its member is paused beyond P,
// the counter is activated and added to on another member, then the
// member resumes and the held add writes with its old token: the store
// must refuse it. Its two acknowledged adds join the history, so a stale
// write accepted also shows as an acknowledged add lost.
func chaosFenceEpisode(t *testing.T, tc *testkit.TestCluster, gate *chaosGate, release func()) []chaosOp {
	t.Helper()
	id := cluster.NewIdentity("chaos", "fence")
	var ops []chaosOp
	add := func(ctx context.Context, node *cluster.Cluster, reqID string) error {
		op := chaosOp{id: id, reqID: reqID, call: tc.Now().UnixNano()}
		v, err := cluster.Request[*chaosVal](ctx, node, id, &chaosAdd{ID: reqID})
		if err != nil {
			return err
		}
		op.ok, op.out, op.ret = true, v.N, tc.Now().UnixNano()
		ops = append(ops, op)
		return nil
	}
	owner := fenceEpisode{
		first:   func(ctx context.Context, node *cluster.Cluster) error { return add(ctx, node, "fence-1") },
		gated:   func(node *cluster.Cluster) { node.Send(id, &chaosAdd{ID: "fence-stale", Gate: true}) },
		entered: gate.entered,
		second:  func(ctx context.Context, node *cluster.Cluster) error { return add(ctx, node, "fence-2") },
	}.run(t, tc, id)
	tc.Resume(owner)
	release()
	select {
	case err := <-gate.written:
		if !errors.Is(err, testkit.ErrStaleToken) {
			t.Errorf("chaos: the paused activation's write of %s was not refused as stale: %v", id, err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("chaos: the paused activation of %s did not write after its member resumed", id)
	}
	return ops
}

// chaosSettle checks that the healed cluster answers: every counter the run
// touched is read, from the running members in turn, each retried until it
// answers or chaosSettleBudget has passed since the heal (the wait-out of a
// member killed just before it, and the retry backoff, take a few seconds
// at most). A counter that does not answer is an error: a request that
// fails forever after the faults healed (stuck placement, a lost
// acknowledgement, a cache pointing at a gone activation). The reads join
// the history, so they are checked for linearizability too: a counter
// must read the total of its last applied add.
func chaosSettle(t *testing.T, tc *testkit.TestCluster, history []chaosOp) []chaosOp {
	t.Helper()
	seen := map[cluster.Identity]bool{}
	var ids []cluster.Identity
	for _, op := range history {
		if !seen[op.id] {
			seen[op.id] = true
			ids = append(ids, op.id)
		}
	}
	up := tc.Up()
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), chaosSettleBudget)
	defer cancel()
	var (
		mu     sync.Mutex
		out    []chaosOp
		failed []string
		wg     sync.WaitGroup
	)
	var attemptLog atomic.Int64
	next := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				id := ids[k]
				node := tc.Node(up[k%len(up)])
				err := ctx.Err() // when the budget ran out before the first attempt
				for ctx.Err() == nil {
					op := chaosOp{id: id, call: tc.Now().UnixNano()}
					attempt, cancelAttempt := context.WithTimeout(ctx, time.Second)
					var v *chaosVal
					v, err = cluster.Request[*chaosVal](attempt, node, id, &chaosRead{})
					cancelAttempt()
					if err != nil && attemptLog.Add(1) <= 10 {
						t.Logf("chaos: after the heal, read of %s from %s failed: %v", id, node.Self().Key(), err)
					}
					if err == nil {
						op.ok, op.out, op.ret = true, v.N, tc.Now().UnixNano()
						mu.Lock()
						out = append(out, op)
						mu.Unlock()
						break
					}
				}
				if err != nil {
					mu.Lock()
					failed = append(failed, fmt.Sprintf("%s from %s: %v", id, node.Self().Key(), err))
					mu.Unlock()
				}
			}
		}()
	}
	for k := range ids {
		next <- k
	}
	close(next)
	wg.Wait()
	t.Logf("chaos: after the heal, %d of %d counters answered a read in %v", len(out), len(ids), time.Since(began).Round(time.Millisecond))
	if len(failed) > 0 {
		sort.Strings(failed)
		t.Errorf("chaos: %d of %d counters did not answer within %v of the heal, e.g. %s", len(failed), len(ids), chaosSettleBudget,
			strings.Join(failed[:min(len(failed), 5)], "; "))
	}
	return out
}
