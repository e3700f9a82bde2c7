package remote

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGoneRecords: a Node under the Remote extension records a peer
// incarnation it reports terminated while it may live on (unreachable,
// blocked), not one that said goodbye or was replaced by a restart, nor
// any under a bare Node (no watches to tell of); the records are bounded,
// the oldest going first.
func TestGoneRecords(t *testing.T) {
	bare, err := NewNode(testConfig(), Hooks{})
	require.NoError(t, err)
	bare.mu.Lock()
	require.Nil(t, bare.markGone("a:1", "a", ErrPeerUnreachable))
	bare.mu.Unlock()

	n, err := NewNode(testConfig(), Hooks{remote: &Remote{}})
	require.NoError(t, err)
	n.peersCap = 2
	n.mu.Lock()
	defer n.mu.Unlock()
	require.Nil(t, n.markGone("a:1", "a", fmt.Errorf("%w: bye", ErrPeerShutdown)))
	require.Nil(t, n.markGone("a:1", "a", fmt.Errorf("%w: b replaced a", ErrPeerRestarted)))
	require.Nil(t, n.markGone("a:1", "", ErrPeerUnreachable), "no node ID known")
	require.Empty(t, n.gone)

	a := n.markGone("a:1", "a", fmt.Errorf("%w: gone for an hour", ErrPeerUnreachable))
	b := n.markGone("b:1", "b", fmt.Errorf("%w: node b", ErrBlocked))
	require.NotNil(t, a)
	require.NotNil(t, b)
	c := n.markGone("c:1", "c", ErrPeerUnreachable)
	require.Equal(t, map[string]*goneRecord{"b": b, "c": c}, n.gone, "the oldest record goes")
	b2 := n.markGone("b:1", "b", ErrPeerUnreachable)
	require.Equal(t, map[string]*goneRecord{"b": b2, "c": c}, n.gone, "a new report of b replaces its record")

	// Another incarnation at c's address: c will not come back.
	n.rememberPeer(hello{Address: "c:1", NodeID: "c"})
	require.Len(t, n.gone, 2, "c itself connected")
	n.rememberPeer(hello{Address: "c:1", NodeID: "c2"})
	require.Equal(t, map[string]*goneRecord{"b": b2}, n.gone)
}
