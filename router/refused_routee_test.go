package router_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/router"
)

// A pool whose routee spawns are refused (a SpawnMiddleware says no; the
// system is shutting down) has no routees, not nil ones. Before, each
// refused spawn's nil PID was listed as a routee: GetRoutees answered
// [<nil> <nil> <nil>], and messages were routed to nil (dead letters with
// ErrNilPID) instead of being refused with ErrNoRoutees.
func TestPoolRefusedRouteeSpawnsAreNoRoutees(t *testing.T) {
	refused := errors.New("refused")
	sys, err := actor.NewSystem(actor.SystemConfig{Workers: 2, SpawnMiddleware: []actor.SpawnMiddleware{
		func(next actor.SpawnFunc) actor.SpawnFunc {
			return func(info actor.SpawnInfo, props *actor.Props) (*actor.PID, error) {
				if strings.Contains(info.Parent.ID, "$manager") { // a routee
					return nil, refused
				}
				return next(info, props)
			}
		},
	}})
	require.NoError(t, err)
	defer func() { require.NoError(t, sys.Shutdown(context.Background())) }()
	r, err := router.SpawnPool(sys.Root(), actor.PropsFromFunc(func(actor.Context) {}), 3, router.RoundRobin())
	require.NoError(t, err)
	got, err := actor.Request[*router.Routees](t.Context(), sys.Root(), r, &router.GetRoutees{})
	require.NoError(t, err)
	require.Empty(t, got.PIDs)
	_, err = actor.Request[any](t.Context(), sys.Root(), r, "hello")
	require.ErrorIs(t, err, router.ErrNoRoutees)
	got, err = actor.Request[*router.Routees](t.Context(), sys.Root(), r, &router.Resize{Size: 5})
	require.NoError(t, err)
	require.Empty(t, got.PIDs)
}
