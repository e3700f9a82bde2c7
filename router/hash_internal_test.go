package router

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fraktor-go/fraktor/actor"
)

// Rendezvous hashing: adding an 11th routee to 10 moves about 1/11 of the
// keys, every one of them to the new routee, and the keys spread evenly.
func TestRendezvousAddingRouteeMovesAboutOneNth(t *testing.T) {
	const keys, n = 20000, 10
	var pids []*actor.PID
	for i := range n + 1 {
		pids = append(pids, actor.NewPID("local", "#7/worker$"+strconv.Itoa(i)))
	}
	before, after := newRouteeSet(pids[:n]), newRouteeSet(pids)
	moved, load := 0, make([]int, n)
	for k := range keys {
		h := hashKey("order-" + strconv.Itoa(k))
		b, a := rendezvous(before.keys, h), rendezvous(after.keys, h)
		load[b]++
		if a != b {
			moved++
			assert.Equal(t, n, a, "a key moved between old routees")
		}
	}
	frac := float64(moved) / keys
	assert.InDelta(t, 1.0/(n+1), frac, 0.02, "moved fraction %.4f", frac)
	for i, l := range load {
		assert.InDelta(t, keys/n, l, keys/n/5, "routee %d holds %d keys", i, l)
	}
}
