package router_test

// Found by newuser8 (an Akka developer porting a service); see the report.

import (
	"errors"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/router"
	"github.com/fraktor-go/fraktor/testkit"
)

// nilKey's HashKey panics when dev is nil: user code with a bug, run by the
// router wherever it routes the message.
type nilKey struct{ dev *string }

func (m *nilKey) HashKey() string { return *m.dev }

type devKey string

func (k devKey) HashKey() string { return string(k) }

func hashPool(t *testing.T, sys *actor.System) *actor.PID {
	pool, err := router.SpawnPool(sys.Root(), actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(devKey); ok {
			c.Respond("ok")
		}
	}), 2, router.ConsistentHash())
	if err != nil {
		t.Fatal(err)
	}
	return pool
}

// Once the routees exist, a HashKey that panics makes that message a dead
// letter whose reason wraps *actor.PanicError; the router goes on.
func TestAkkaPanickingHashKeyIsADeadLetter(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	events := testkit.NewEventProbe(t, sys.System, testkit.OfType[*actor.DeadLetterEvent]())
	probe := testkit.NewManualProbe(t, sys)
	pool := hashPool(t, sys.System)
	sys.RunUntilIdle() // the routees exist
	sys.Root().Send(pool, &nilKey{})
	dl := testkit.ExpectEvent[*actor.DeadLetterEvent](events, time.Second)
	var pe *actor.PanicError
	if !errors.As(dl.Reason, &pe) {
		t.Fatalf("dead letter reason %v", dl.Reason)
	}
	probe.Send(pool, devKey("a"))
	probe.ExpectMsgEqual("ok", time.Second)
}

// The same message sent just after SpawnPool returns, before the router's
// actor has spawned the routees (docs/routers.md: such messages are held and
// routed "as soon as the routees exist"), is routed by the router's actor:
// the HashKey panic is then that actor's failure. Its supervisor (the user
// guardian's default strategy) restarts it, the restarted actor spawns two
// new routees and routes the held messages again, the same one included
// (a failed message is dropped everywhere else), and panics again: 11
// failures (22 routees spawned and stopped) in no time, then the strategy
// stops the router for good. Every later message is a dead letter
// ("router: stopped"): one bad message took the whole pool down, where after
// the start it costs only itself (the test above). Expected: the held
// message is a dead letter wrapping *actor.PanicError, the router keeps
// routing.
func TestNewuser8PanickingHashKeyHeldAtStartStopsTheRouter(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	pool := hashPool(t, sys.System)
	sys.Root().Send(pool, &nilKey{}) // held: the routees do not exist yet
	sys.RunUntilIdle()
	probe.Send(pool, devKey("a"))
	r, ok := probe.Receive(time.Second)
	if !ok || r.Msg != "ok" {
		t.Fatalf("after a held message whose HashKey panicked, the router does not route: got %v (received %v)", r, ok)
	}
}
