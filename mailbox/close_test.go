package mailbox_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/mailbox"
)

// Close drains what was queued when it began; a post that arrives during
// the drain goes to the sink on the poster's side, inside PostUser or
// PostSystem, so the drain ends however fast others keep posting. The sink
// below posts again for every value the drain hands it: a drain that took
// those posts too would never run dry.
func TestMailboxCloseDrainIsBounded(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    func() mailbox.Queue[int]
	}{
		{"unbounded", func() mailbox.Queue[int] { return nil }},
		{"bounded", func() mailbox.Queue[int] { return mailbox.NewBounded[int](64, mailbox.DropOldest) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mb, _ := newMailbox(tc.q())
			const queued = 10
			for i := 0; i < queued; i++ {
				require.NoError(t, mb.PostUser(nil, i))
			}
			mb.PostSystem(nil, -1)
			const cap = 10000 // ends the loop of a drain that is not bounded
			drained, direct, posts := 0, 0, 0
			inPost := false
			*sinks[mb] = func(v int) {
				if inPost {
					direct++ // sunk inside the PostUser below
					return
				}
				drained++
				if posts < cap {
					posts++
					inPost = true
					require.NoError(t, mb.PostUser(nil, 1000+v))
					inPost = false
				}
			}
			mb.Close()
			require.True(t, mb.Closed())
			require.Equal(t, queued+1, drained, "only what was queued at Close is drained")
			require.Equal(t, queued+1, direct, "posts during the drain are sunk by the poster")
			require.Equal(t, 0, mb.UserLen(), "nothing is left queued")
			require.False(t, mb.HasSystem())

			// After Close, a post is sunk before it returns.
			before := direct
			inPost = true
			require.NoError(t, mb.PostUser(nil, 7))
			mb.PostSystem(nil, 8)
			require.Equal(t, before+2, direct)
			require.Equal(t, 0, mb.UserLen())
			require.False(t, mb.HasSystem())
		})
	}
}
