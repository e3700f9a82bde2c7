package remote_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/mailbox"
)

// TestRemotePoisonFutureFullMailboxFails: PoisonFuture of an actor on
// another node whose bounded mailbox is full. Its pill carries the future
// as its sender across the wire, so the refusal there (a dead letter with
// ErrMailboxFull) answers the future with a DeadLetterResponse that says
// why, and the future fails as it does for a local actor. Before, the
// pill went without a sender, nothing answered, and the future's Wait,
// which has no timeout, waited for ever.
func TestRemotePoisonFutureFullMailboxFails(t *testing.T) {
	sysA, _ := startSystem(t, "a", testConfig(t))
	sysB, _ := startSystem(t, "b", testConfig(t))
	entered, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	pid, err := sysB.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if c.Message() == "block" {
			close(entered)
			<-release
		}
	}, actor.WithBoundedMailbox(1, mailbox.Reject)), "full")
	require.NoError(t, err)
	sysB.Root().Send(pid, "block")
	<-entered
	sysB.Root().Send(pid, "queued") // the mailbox is full

	f := sysA.Root().PoisonFuture(remotePID(pid))
	select {
	case <-f.Done():
	case <-ctxWait(t).Done():
		t.Fatal("the future of a pill the remote mailbox refused is still pending")
	}
	_, err = f.Result()
	require.ErrorIs(t, err, actor.ErrDeadLetter)
	require.ErrorIs(t, err, actor.ErrMailboxFull)
}
