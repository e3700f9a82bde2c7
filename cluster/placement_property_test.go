package cluster

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// Property (V1.2, V1.3, rule 3): three member cores that install a shared
// sequence of views, each at its own pace, and exchange acknowledgements
// never run one identity on two members at once, whatever the order of
// requests, view installs, acks, terminations and the passing of time.
// Members p and q come and go; they host the kind but run nothing and never
// acknowledge, so identities they owned are waited out.
func TestPlacementCorePropertySingleActivation(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runSingleActivationProperty(t, seed) })
	}
}

func runSingleActivationProperty(t *testing.T, seed uint64) {
	rng := newTestRand(seed)
	cores := []*placementCore{newTestCore(mA), newTestCore(mB), newTestCore(mC)}
	phantoms := []Member{coreMember("p"), coreMember("q")}
	ids := make([]Identity, 24)
	for i := range ids {
		ids[i] = NewIdentity("forever", fmt.Sprintf("g-%d", i))
	}
	now := coreT0
	for _, c := range cores {
		c.setLease(heldLease(now.Add(1000 * time.Hour)))
	}
	epoch := uint64(1)
	viewOf := func() Topology {
		ms := []Member{mA, mB, mC}
		for _, p := range phantoms {
			if rng.IntN(2) == 0 {
				ms = append(ms, p)
			}
		}
		return NewTopology(epoch, ms)
	}
	views := []Topology{viewOf()}
	next := make([]int, len(cores)) // index of each core's next view to install
	pids, granted := 0, 0

	for step := range 3000 {
		c := cores[rng.IntN(len(cores))]
		ci := map[*placementCore]int{cores[0]: 0, cores[1]: 1, cores[2]: 2}[c]
		switch rng.IntN(7) {
		case 0: // the provider publishes a new view
			epoch++
			views = append(views, viewOf())
		case 1: // a core installs its next view, or the latest (the feed keeps only the newest unread view)
			if ci == 2 && step < 1000 {
				continue // c joins late: its first view is a later one
			}
			if rng.IntN(3) == 0 || !c.hasView {
				next[ci] = len(views) - 1
			}
			if next[ci] < len(views) {
				_, err := c.installView(views[next[ci]], nil, now)
				require.NoError(t, err)
				next[ci]++
			}
		case 2: // a core acknowledges its view to the others
			if c.canAck() {
				for _, o := range cores {
					if o != c {
						o.ack(c.selfKey, c.view.Epoch, now)
					}
				}
			}
		case 3, 4: // a request under the requester's view
			req := cores[rng.IntN(len(cores))]
			if !req.hasView {
				continue
			}
			id := ids[rng.IntN(len(ids))]
			owner, err := req.ring.Owner(id)
			require.NoError(t, err)
			for _, o := range cores {
				if o.selfKey != owner.Key() {
					continue
				}
				a, existing, r := o.activate(id, req.view.Epoch, req.view.Hash, now)
				if r == nil && !existing {
					pids++
					granted++
					o.started(a, actor.NewPID(o.self.Address, fmt.Sprintf("g%d", pids)))
				}
			}
		case 5: // a stopping grain terminates, or an active one passivates
			var first *activation
			c.acts.each(func(a *activation) {
				if first == nil {
					first = a
				}
			})
			if a := first; a != nil {
				if a.state == actStopping {
					c.terminated(a.pid)
				} else {
					c.passivate(a.pid, now)
				}
			}
		case 6: // time passes
			now = now.Add(time.Duration(rng.Int64N(int64(coreW))))
			for _, o := range cores {
				o.tick(now)
				o.overdue(now)
			}
		}
		running := map[Identity]string{}
		for _, o := range cores {
			stopping := 0
			o.acts.each(func(a *activation) {
				if other, ok := running[a.id]; ok {
					t.Fatalf("step %d: %s runs on %s and %s", step, a.id, other, o.selfKey)
				}
				running[a.id] = o.selfKey
				if a.state == actStopping {
					stopping++
				}
			})
			// overdue skips its scan when the count says nothing is stopping.
			require.Equal(t, stopping, o.stopping, "step %d: %s's count of stopping activations", step, o.selfKey)
		}
	}
	require.Greater(t, granted, 20, "the run must grant activations to test anything")
}
