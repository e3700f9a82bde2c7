package cluster

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The vote's verdict: more than half of the view, counting this member's
// own report and the fresh reports received; blocked members neither
// judged nor counted.
func TestVotedUnreachable(t *testing.T) {
	now := time.Unix(1000, 0)
	fresh := now.Add(-time.Second)
	members := func(n int) []Member {
		ms := make([]Member, n)
		for i := range ms {
			ms[i] = Member{ID: fmt.Sprintf("m%d", i), Incarnation: 1, Address: fmt.Sprintf("10.0.0.%d:1", i)}
		}
		return ms
	}
	key := func(ms []Member, i int) string { return ms[i].Key() }
	none := func(string) bool { return false }
	names := func(out []Member) []string {
		var s []string
		for _, m := range out {
			s = append(s, m.ID)
		}
		return s
	}

	t.Run("nobody reaches one of three", func(t *testing.T) {
		ms := members(3)
		reports := map[string]reachReport{key(ms, 1): {keys: []string{key(ms, 2)}, at: now}}
		out, votes := votedUnreachable(ms, key(ms, 0), []string{key(ms, 2)}, reports, fresh, none, none)
		require.Equal(t, []string{"m2"}, names(out))
		require.Equal(t, 2, votes[key(ms, 2)])
	})
	t.Run("the one that reaches nobody blocks nobody", func(t *testing.T) {
		ms := members(3)
		out, _ := votedUnreachable(ms, key(ms, 2), []string{key(ms, 0), key(ms, 1)}, nil, fresh, none, none)
		require.Empty(t, out)
	})
	t.Run("two members never block each other", func(t *testing.T) {
		ms := members(2)
		reports := map[string]reachReport{key(ms, 1): {keys: []string{key(ms, 0)}, at: now}}
		out, _ := votedUnreachable(ms, key(ms, 0), []string{key(ms, 1)}, reports, fresh, none, none)
		require.Empty(t, out)
	})
	t.Run("an even split blocks nobody", func(t *testing.T) {
		ms := members(4)
		reports := map[string]reachReport{
			key(ms, 1): {keys: []string{key(ms, 2), key(ms, 3)}, at: now},
			key(ms, 2): {keys: []string{key(ms, 0), key(ms, 1)}, at: now}, // not received in a real split; still not enough
		}
		out, _ := votedUnreachable(ms, key(ms, 0), []string{key(ms, 2), key(ms, 3)}, reports, fresh, none, none)
		require.Empty(t, out)
	})
	t.Run("the larger side of an uneven split blocks the smaller", func(t *testing.T) {
		ms := members(5)
		small := []string{key(ms, 3), key(ms, 4)}
		reports := map[string]reachReport{key(ms, 1): {keys: small, at: now}, key(ms, 2): {keys: small, at: now}}
		out, votes := votedUnreachable(ms, key(ms, 0), small, reports, fresh, none, none)
		require.Equal(t, []string{"m3", "m4"}, names(out))
		require.Equal(t, 3, votes[key(ms, 3)])
		require.Equal(t, 3, votes[key(ms, 4)])
	})
	t.Run("stale reports do not count", func(t *testing.T) {
		ms := members(3)
		reports := map[string]reachReport{key(ms, 1): {keys: []string{key(ms, 2)}, at: fresh.Add(-time.Nanosecond)}}
		out, _ := votedUnreachable(ms, key(ms, 0), []string{key(ms, 2)}, reports, fresh, none, none)
		require.Empty(t, out)
	})
	t.Run("every link down: only own votes, nobody blocked", func(t *testing.T) {
		ms := members(3)
		out, _ := votedUnreachable(ms, key(ms, 0), []string{key(ms, 1), key(ms, 2)}, nil, fresh, none, none)
		require.Empty(t, out)
	})
	t.Run("blocked members are neither judged nor counted", func(t *testing.T) {
		ms := members(3)
		blocked := func(k string) bool { return k == key(ms, 1) }
		// m1, blocked, reports m2: its report does not count; m1 is not judged.
		reports := map[string]reachReport{key(ms, 1): {keys: []string{key(ms, 2)}, at: now}}
		out, _ := votedUnreachable(ms, key(ms, 0), []string{key(ms, 1), key(ms, 2)}, reports, fresh, blocked, none)
		require.Empty(t, out)
	})
	t.Run("a suspended member's reports do not count", func(t *testing.T) {
		ms := members(3)
		silent := func(k string) bool { return k == key(ms, 1) }
		reports := map[string]reachReport{key(ms, 1): {keys: []string{key(ms, 2)}, at: now}}
		out, votes := votedUnreachable(ms, key(ms, 0), []string{key(ms, 2)}, reports, fresh, none, silent)
		require.Empty(t, out)
		require.Equal(t, 1, votes[key(ms, 2)])
	})
	t.Run("a report naming a member about itself is not a vote", func(t *testing.T) {
		ms := members(3)
		reports := map[string]reachReport{key(ms, 2): {keys: []string{key(ms, 2)}, at: now}}
		out, _ := votedUnreachable(ms, key(ms, 0), []string{key(ms, 2)}, reports, fresh, none, none)
		require.Empty(t, out)
	})
}

// Reachability.After is 0 (off) or at least two ticks: a shorter one
// would judge a link by fewer reports than a tick brings.
func TestReachabilityConfig(t *testing.T) {
	reg, err := NewMemoryRegistry(DefaultMemoryConfig())
	require.NoError(t, err)
	defer reg.Close()
	c := Config{Provider: reg, TickInterval: 100 * time.Millisecond}
	require.NoError(t, c.Validate())
	c.Reachability.After = 150 * time.Millisecond
	require.ErrorIs(t, c.Validate(), ErrInvalidConfig)
	c.Reachability.After = -time.Second
	require.ErrorIs(t, c.Validate(), ErrInvalidConfig)
	c.Reachability.After = 200 * time.Millisecond
	require.NoError(t, c.Validate())
}
