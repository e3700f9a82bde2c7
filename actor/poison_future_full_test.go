package actor_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/mailbox"
)

// blockedActor spawns an actor whose first string message holds its turn
// until release is closed; it returns once the actor is inside that turn.
func blockedActor(t *testing.T, sys *actor.System, opts ...actor.PropsOption) (pid *actor.PID, release chan struct{}) {
	t.Helper()
	entered, release := make(chan struct{}), make(chan struct{})
	pid = sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if c.Message() == "block" {
			close(entered)
			<-release
		}
	}, opts...))
	sys.Root().Send(pid, "block")
	<-entered
	return pid, release
}

// PoisonFuture's pill is a user message, so a full bounded mailbox
// refuses it (Reject), drops it (DropNewest), or queues it and drops it
// when a later message comes (DropOldest): the actor does not stop. The
// future fails then with ErrMailboxFull, as a request's does; before,
// nothing answered it and its Wait, which has no timeout, waited for
// ever. The refusals happen on the posting goroutine, so the future has
// failed when the post returns.
func TestPoisonFutureFullMailboxFails(t *testing.T) {
	for _, policy := range []mailbox.Overflow{mailbox.Reject, mailbox.DropNewest, mailbox.DropOldest} {
		t.Run(policy.String(), func(t *testing.T) {
			sys, err := actor.NewSystem(actor.SystemConfig{})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, sys.Shutdown(context.Background())) })
			pid, release := blockedActor(t, sys, actor.WithBoundedMailbox(1, policy))
			defer close(release)
			sys.Root().Send(pid, "queued") // the mailbox is full
			f := sys.Root().PoisonFuture(pid)
			if policy == mailbox.DropOldest {
				sys.Root().Send(pid, "late") // drops the pill, queued in place of "queued"
			}
			select {
			case <-f.Done():
			default:
				t.Fatal("the future of a pill the mailbox did not keep is still pending")
			}
			_, err = f.Result()
			require.ErrorIs(t, err, actor.ErrMailboxFull)
		})
	}
}

// A pill that was queued and is drained as a dead letter when its actor
// stops otherwise (a Stop, Shutdown) does not fail PoisonFuture: the actor
// has stopped, and the future learns it from its Watch (Terminated). Here
// the Watch and then a Stop wait behind the actor's turn, with the pill in
// the user queue: the stop drains the pill before it tells its watchers.
func TestPoisonFutureOfActorStoppedOtherwise(t *testing.T) {
	sys, err := actor.NewSystem(actor.SystemConfig{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, sys.Shutdown(context.Background())) })
	pid, release := blockedActor(t, sys)
	f := sys.Root().PoisonFuture(pid)
	sys.Root().Stop(pid)
	close(release)
	res, err := f.Result()
	require.NoError(t, err)
	require.IsType(t, &actor.Terminated{}, res)
}
