package actor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// An answer that is a nil *DeadLetterResponse completes the future with it
// like any other value. Before, the future took the completion (its state
// set) and then panicked reading the nil response's fields, on the
// answerer's goroutine: the future was never set, and its waiter waited
// for good, past its timeout and past Shutdown.
func TestFutureNilDeadLetterResponse(t *testing.T) {
	sys := testkit.NewSystem(t)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(string); ok {
			c.Respond((*actor.DeadLetterResponse)(nil))
		}
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := sys.Root().RequestFuture(pid, "ask", time.Minute).ResultContext(ctx)
	require.NoError(t, err)
	require.Equal(t, (*actor.DeadLetterResponse)(nil), res)
}
