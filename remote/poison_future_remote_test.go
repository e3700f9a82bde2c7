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

// The pill's sender changes nothing where the pill is taken or has no
// actor: PoisonFuture of a remote actor completes without error once it
// stopped, and of a remote actor that does not exist as its Watch answers
// (Terminated, not found), not with the dead-letter answer to the pill.
func TestRemotePoisonFutureStoppedAndMissing(t *testing.T) {
	sysA, _ := startSystem(t, "a", testConfig(t))
	sysB, _ := startSystem(t, "b", testConfig(t))
	for i := range 20 {
		pid := sysB.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
		f := sysA.Root().PoisonFuture(remotePID(pid))
		select {
		case <-f.Done():
		case <-ctxWait(t).Done():
			t.Fatal("PoisonFuture of a remote actor never completed")
		}
		_, err := f.Result()
		require.NoError(t, err, "run %d: a stopped actor", i)

		missing := actor.NewPID(pid.Address, "missing-"+pid.ID)
		f = sysA.Root().PoisonFuture(remotePID(missing))
		select {
		case <-f.Done():
		case <-ctxWait(t).Done():
			t.Fatal("PoisonFuture of a missing remote actor never completed")
		}
		_, err = f.Result()
		require.NoError(t, err, "run %d: a missing actor", i)
	}
}
