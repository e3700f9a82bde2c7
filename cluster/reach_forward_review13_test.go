package cluster_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster/internal/clusterpb"
	"github.com/fraktor-go/fraktor/remote"
)

// A block the vote made ends after BlockFor on every member that applied
// it (docs/cluster.md: "the notice carries it"). A member that applies a
// BlockNotice blocks the address in its own BlockList, and its
// onBlockEvent sends a BlockNotice of its own to every other member; on
// branch reach that forwarded notice says block_for_nanos 0 (voteBlockFor
// knows only the blocks this member's vote makes), that is a block by
// hand, for good. A member that gets the forwarded notice before the
// voter's own (a notice is sent once; the voter's can be late or lost
// with its connection) blocks the member until an operator unblocks it,
// while the others end their block after BlockFor: a vote's block
// becomes a permanent one. Here the voter's notice reaches b only (sent
// to b's placement actor as the voter would); a and c hear of the block
// from b.
func TestReview13ForwardedVoteBlockKeepsItsEnd(t *testing.T) {
	reg := fastRegistry(t)
	tune := reachTiming(300 * time.Millisecond)
	a := startMemberWith(t, reg, tune, counterKind())
	b := startMemberWith(t, reg, tune, counterKind())
	c := startMemberWith(t, reg, tune, counterKind())
	x := startMemberWith(t, reg, tune, counterKind())
	awaitMembers(t, 4, a, b, c, x)
	changes := blockChanges(a, b, c)
	var xm struct{ key, id string }
	for _, m := range b.c.Members() {
		if m.Address == x.sys.Address() {
			xm.key, xm.id = m.Key(), m.ID
		}
	}
	require.NotEmpty(t, xm.key)
	addr := x.sys.Address()

	// The voter's notice: x blocked for 300 ms.
	b.sys.Root().Send(actor.NewPID(b.sys.Address(), "$placement"), &clusterpb.BlockNotice{
		MemberKey: xm.key, MemberId: xm.id, Address: addr, BlockForNanos: int64(300 * time.Millisecond)})

	// a, b and c block x; each block ends, 300 ms later: within 3 s
	// (ten BlockFor) under load.
	state := map[string][]bool{}
	deadline := time.After(3 * time.Second)
	for _, n := range []node{a, b, c} {
		on := n.sys.Address()
		for len(state[on]) < 2 {
			select {
			case ch := <-changes:
				state[ch[0].(string)] = append(state[ch[0].(string)], ch[1].(bool))
			case <-deadline:
				require.Failf(t, "a vote's block did not end on every member",
					"block changes (true: blocked): a %v, b %v, c %v; blocked on a %v, on c %v",
					state[a.sys.Address()], state[b.sys.Address()], state[c.sys.Address()],
					remote.Get(a.sys).BlockList().Blocked(), remote.Get(c.sys).BlockList().Blocked())
			}
		}
	}
}
