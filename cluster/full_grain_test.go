package cluster_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/mailbox"
)

// fullGrainHold makes the grain wait in Receive until the test lets it go.
type fullGrainHold struct{}

// A grain whose mailbox refuses a request (a bounded mailbox here; remote's
// MaxMailboxBacklog for messages from other members answers the same way)
// is alive and overloaded: the request fails at once with an error
// matching actor.ErrMailboxFull, not retried, and the grain's PID stays
// cached, so requests succeed again once it has drained. Before, each of
// the retry policy's attempts dropped the PID and asked the owner again,
// and the caller got ErrTimeout after the backoffs (about 7.6 s with the
// defaults; flow's report).
func TestClusterRequestToFullGrainFailsAtOnce(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	kind := cluster.NewKind("full", actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *fullGrainHold:
			entered <- struct{}{}
			<-release
		case *WhoAmI:
			c.Respond(&Identity{Member: c.Self().Address})
		}
	}, actor.WithBoundedMailbox(2, mailbox.Reject), actor.WithBlocking()))
	reg := newRegistry(t)
	a := startMember(t, reg, kind)
	awaitMembers(t, 1, a)
	ctx := ctxWait(t)
	id := cluster.NewIdentity("full", "x")
	_, err := cluster.Request[*Identity](ctx, a.c, id, &WhoAmI{})
	require.NoError(t, err)

	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	a.c.Send(id, &fullGrainHold{})
	<-entered
	futs := []*actor.Future{a.c.RequestFuture(id, &WhoAmI{}, time.Minute), a.c.RequestFuture(id, &WhoAmI{}, time.Minute)}

	_, err = cluster.Request[*Identity](ctx, a.c, id, &WhoAmI{})
	require.ErrorIs(t, err, actor.ErrMailboxFull)
	require.False(t, errors.Is(err, cluster.ErrTimeout), "not retried until the deadline: %v", err)

	close(release)
	released = true
	for _, f := range futs {
		_, err := f.Result()
		require.NoError(t, err)
	}
	_, err = cluster.Request[*Identity](ctx, a.c, id, &WhoAmI{})
	require.NoError(t, err)
}
