package remote_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/mailbox"
)

// A request from another node to an actor whose bounded mailbox (Reject)
// is full fails with actor.ErrMailboxFull, as a local request does: the
// receiving node's DeadLetterResponse carries the reason (wire reason 6,
// docs/remote.md), so the caller can tell back-pressure from a missing
// actor.
func TestRemoteRequestToFullMailboxSaysMailboxFull(t *testing.T) {
	sysA, _ := startSystem(t, "a", testConfig(t))
	sysB, _ := startSystem(t, "b", testConfig(t))
	busy, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	slow, err := sysB.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*Echo); ok {
			if m.Text == "hold" {
				close(busy)
				<-release
				return
			}
			c.Respond(&EchoReply{Text: m.Text})
		}
	}, actor.WithBoundedMailbox(1, mailbox.Reject)), "slow")
	require.NoError(t, err)
	target := remotePID(slow)

	sysA.Root().Send(target, &Echo{Text: "hold"})
	select {
	case <-busy:
	case <-ctxWait(t).Done():
		t.Fatal("the actor never took the first message")
	}
	sysA.Root().RequestFuture(target, &Echo{Text: "queued"}, wait) // fills the mailbox
	_, err = actor.Request[*EchoReply](ctxWait(t), sysA.Root(), target, &Echo{Text: "refused"})
	require.ErrorIs(t, err, actor.ErrDeadLetter)
	require.ErrorIs(t, err, actor.ErrMailboxFull, "the receiver's reason reaches the caller")
}
