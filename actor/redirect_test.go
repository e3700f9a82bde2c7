package actor_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

type redirected struct {
	name   string
	msg    any
	sender *actor.PID
}

// Host.SetRedirect: user messages for children of the parent that do not
// exist (never did, stopped, or still queued when the child stopped) are
// offered to the Redirect before they become dead letters; a message it
// refuses, and one for a deeper descendant, is a dead letter as before.
func TestRedirectChildren(t *testing.T) {
	grab := &hostGrab{}
	sys := testkit.NewSystem(t, func(c *actor.SystemConfig) { c.Extensions = append(c.Extensions, grab) })
	host := grab.host
	root := sys.Root()

	blocked, release := make(chan struct{}), make(chan struct{})
	kidProps := actor.PropsFromFunc(func(ctx actor.Context) {
		switch m := ctx.Message().(type) {
		case string:
			if m == "block-then-stop" {
				close(blocked)
				<-release
				ctx.Stop(ctx.Self())
			}
		case *actor.PID: // spawn a grandchild named "g" and answer its PID
			g, err := ctx.SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), "g")
			require.NoError(t, err)
			ctx.Respond(g)
		}
	})
	parent := root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		if name, ok := ctx.Message().(string); ok {
			pid, err := ctx.SpawnNamed(kidProps, name)
			require.NoError(t, err)
			ctx.Respond(pid)
		}
	}))
	spawnKid := func(name string) *actor.PID {
		res, err := root.RequestFuture(parent, name, 0).Result()
		require.NoError(t, err)
		return res.(*actor.PID)
	}

	got := make(chan redirected, 16)
	require.ErrorIs(t, host.SetRedirect(nil, nil), actor.ErrNilPID)
	require.ErrorIs(t, host.SetRedirect(actor.NewPID(sys.Address(), "no-such-actor"), nil), actor.ErrDeadLetter)
	require.NoError(t, host.SetRedirect(parent, func(child *actor.PID, name string, msg any, sender *actor.PID) bool {
		m, _ := actor.UnwrapEnvelope(msg)
		if s, ok := m.(string); !ok || !strings.HasPrefix(s, "take") {
			return false
		}
		require.True(t, strings.HasSuffix(child.ID, "/"+name), "child %s, name %s", child.ID, name)
		got <- redirected{name: name, msg: m, sender: sender}
		return true
	}))

	kid := spawnKid("kid")
	prefix := strings.TrimSuffix(kid.ID, "kid")

	// A child that never existed.
	before := sys.DeadLetters()
	root.Send(actor.NewPID(sys.Address(), prefix+"ghost"), "take-ghost")
	assert.Equal(t, redirected{name: "ghost", msg: "take-ghost"}, <-got)

	// Messages still queued when the child stopped, in the order sent.
	root.Send(kid, "block-then-stop")
	<-blocked
	root.Send(kid, "take-a")
	root.Send(kid, "take-b")
	stopped := root.StopFuture(kid)
	close(release)
	_, err := stopped.Result()
	require.NoError(t, err)
	assert.Equal(t, redirected{name: "kid", msg: "take-a"}, <-got)
	assert.Equal(t, redirected{name: "kid", msg: "take-b"}, <-got)

	// After it stopped, through the PID kept and a fresh one alike.
	root.Send(kid, "take-c")
	assert.Equal(t, redirected{name: "kid", msg: "take-c"}, <-got)
	root.Send(actor.NewPID(kid.Address, kid.ID), "take-d")
	assert.Equal(t, redirected{name: "kid", msg: "take-d"}, <-got)
	require.Equal(t, before, sys.DeadLetters(), "a message the redirect took is no dead letter")

	// Refused: a dead letter as before; a request's future fails at once.
	root.Send(kid, "keep")
	_, err = root.RequestFuture(kid, "keep", 0).Result()
	require.ErrorIs(t, err, actor.ErrDeadLetter)
	require.Equal(t, before+2, sys.DeadLetters())

	// A request is offered with its sender.
	f := root.RequestFuture(actor.NewPID(sys.Address(), prefix+"ghost2"), "take-req", 0)
	r := <-got
	assert.Equal(t, "ghost2", r.name)
	require.NotNil(t, r.sender)
	assert.Equal(t, f.PID().ID, r.sender.ID)

	// A grandchild is not the parent's child: not offered.
	other := spawnKid("other")
	res, err := root.RequestFuture(other, other, 0).Result()
	require.NoError(t, err)
	g := res.(*actor.PID)
	_, err = root.StopFuture(g).Result()
	require.NoError(t, err)
	_, err = root.RequestFuture(g, "take-grandchild", 0).Result()
	require.ErrorIs(t, err, actor.ErrDeadLetter)
	select {
	case r := <-got:
		t.Fatalf("a grandchild's message was offered: %+v", r)
	default:
	}
}
