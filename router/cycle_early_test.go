package router_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/router"
	"github.com/fraktor-go/fraktor/testkit"
)

// A routee added to a router's actor before the router is registered (the
// actor runs from its spawn, and its name, "<name>$manager", can be sent
// to) counts in SpawnGroup's cycle check. Before, the check saw only the
// routees SpawnGroup was given, and AddRoutee, handled before the router
// had its PID, checked nothing: with b routing to "c", c's actor took b as
// a routee in that window and c was registered, closing c -> b -> c.
func TestRouterCycleThroughEarlyAddRouteeRefused(t *testing.T) {
	var b *actor.PID
	var sys *actor.System
	sys = testkit.NewSystem(t, func(c *actor.SystemConfig) {
		c.SpawnMiddleware = append(c.SpawnMiddleware, func(next actor.SpawnFunc) actor.SpawnFunc {
			return func(info actor.SpawnInfo, props *actor.Props) (*actor.PID, error) {
				pid, err := next(info, props)
				if err == nil && info.Name == "c$manager" {
					// In the window between the spawn of c's actor and
					// c's registration.
					res, rerr := sys.Root().RequestFuture(pid, &router.AddRoutee{PID: b}, 10*time.Second).Result()
					require.NoError(t, rerr)
					require.Equal(t, []*actor.PID{b}, res.(*router.Routees).PIDs)
				}
				return pid, err
			}
		})
	})
	// b routes to "c": a process that ignores b's Watch holds the name
	// while b starts (an actor's name not taken would end the watch at
	// once, and b would drop it), then lets it go.
	held, err := sys.RegisterProcess("c", silentProcess{})
	require.NoError(t, err)
	b, err = router.SpawnGroup(sys.Root(), router.RoundRobin(), []*actor.PID{held}, router.WithName("b"))
	require.NoError(t, err)
	res, err := sys.Root().RequestFuture(b, &router.GetRoutees{}, 10*time.Second).Result()
	require.NoError(t, err)
	require.Equal(t, []*actor.PID{held}, res.(*router.Routees).PIDs)
	require.True(t, sys.UnregisterProcess(held))

	_, err = router.SpawnGroup(sys.Root(), router.RoundRobin(), nil, router.WithName("c"))
	require.ErrorIs(t, err, router.ErrCycle)
}

// silentProcess takes everything and does nothing.
type silentProcess struct{ _ byte }

func (silentProcess) SendUser(*actor.PID, any, *actor.PID)       {}
func (silentProcess) SendSystem(*actor.PID, actor.SystemMessage) {}
func (silentProcess) StopProcess(*actor.PID)                     {}
