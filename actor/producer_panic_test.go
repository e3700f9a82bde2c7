package actor_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// failures records what a supervisor was told and restarts the child.
type failures struct{ errs chan error }

func (f failures) HandleFailure(sup actor.Supervisor, fl actor.Failure) {
	select {
	case f.errs <- fl.Err:
	default: // a supervisor must not block
	}
	sup.RestartChildren(fl.Child)
}

// A producer that panics, at spawn or at a restart, makes the actor fail
// on its turn with the producer's panic, handled by its supervisor; the
// spawner is not hurt. Before, the panic went through Spawn to its caller:
// a root context's caller died of it, and a parent failed instead of the
// child.
func TestProducerPanicIsFailure(t *testing.T) {
	sup := failures{errs: make(chan error, 8)}
	sys := testkit.NewSystem(t, testkit.WithGuardianStrategy(sup))
	var calls atomic.Int32
	props := actor.PropsFromProducer(func() actor.Actor {
		if calls.Add(1) <= 2 { // at spawn and at the first restart
			panic("cannot build")
		}
		return actor.ReceiveFunc(func(c actor.Context) {
			if _, ok := c.Message().(string); ok {
				c.Respond("built")
			}
		})
	})
	var pid *actor.PID
	require.NotPanics(t, func() { pid = sys.Root().Spawn(props) })
	require.NotNil(t, pid)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range 2 {
		select {
		case err := <-sup.errs:
			var pe *actor.PanicError
			require.True(t, errors.As(err, &pe), "%v", err)
			require.Equal(t, "cannot build", pe.Value, "the producer's own panic, not a wrapper of it")
		case <-ctx.Done():
			t.Fatal("the supervisor was not told of the producer's panic")
		}
	}
	got, err := actor.Request[string](ctx, sys.Root(), pid, "hi")
	require.NoError(t, err)
	require.Equal(t, "built", got, "the third instance works")

	// From an actor: the child fails, not its parent (which would not
	// answer).
	parent := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(string); ok {
			c.Spawn(actor.PropsFromProducer(func() actor.Actor { panic("child cannot build") }))
			c.Respond("spawned")
		}
	}, actor.WithSupervisor(actor.OneForOne(0, 0, func(error) actor.Directive { return actor.StopDirective }))))
	got, err = actor.Request[string](ctx, sys.Root(), parent, "spawn")
	require.NoError(t, err)
	require.Equal(t, "spawned", got)
}
