package testkit_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/mailbox"
	"github.com/fraktor-go/fraktor/testkit"
)

// TestReactivateRefusedPillFails: a grain whose bounded mailbox is full
// refuses the PoisonPill that Reactivate sends; the activation keeps
// running, so Reactivate fails the test instead of starting a second
// activation of the identity beside it.
func TestReactivateRefusedPillFails(t *testing.T) {
	starts := 0
	kind := cluster.NewKind("full", actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			starts++
		}
	}, actor.WithBoundedMailbox(1, mailbox.Reject)))
	rec := newRecorder(t)
	g := testkit.NewGrain(rec, kind, cluster.NewIdentity("full", "a"))
	require.Equal(t, 1, starts)
	g.Sys.Root().Send(g.PID, "fills the mailbox") // not run yet
	g.Reactivate()
	fatals := rec.Fatals()
	require.Len(t, fatals, 1)
	require.True(t, strings.Contains(fatals[0], "did not stop"), fatals[0])
	require.Equal(t, 1, starts, "no second activation")
}
