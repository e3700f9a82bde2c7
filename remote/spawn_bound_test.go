package remote_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// spawnPeer is a bare Node that sends SpawnRequests by hand, as a hostile
// peer would, and collects the answers.
type spawnPeer struct {
	t       *testing.T
	node    *remote.Node
	to      string
	answers chan *remote.SpawnResponse
	seq     uint64
}

func newSpawnPeer(t *testing.T, to string) *spawnPeer {
	t.Helper()
	p := &spawnPeer{t: t, to: to, answers: make(chan *remote.SpawnResponse, 1024)}
	n, err := remote.NewNode(testConfig(t), remote.Hooks{
		Deliver: func(_ remote.Peer, env remote.Envelope) {
			if m, ok := env.Message.(*remote.SpawnResponse); ok {
				p.answers <- m
			}
		},
	})
	require.NoError(t, err)
	require.NoError(t, n.Start(context.Background()))
	t.Cleanup(func() { _ = n.Close(ctxWait(t)) })
	p.node = n
	return p
}

// spawn sends n SpawnRequests of kind echo and returns the PIDs spawned
// and the number refused as too many (any other answer fails the test).
func (p *spawnPeer) spawn(n int) (spawned []remote.PIDRef, refused int) {
	p.t.Helper()
	for range n {
		p.seq++
		require.NoError(p.t, p.node.Send(p.to, remote.Envelope{
			Target:  remote.PIDRef{Address: p.to, ID: "$remote-spawner"},
			Sender:  remote.PIDRef{Address: p.node.Address(), ID: "$remote-spawner"},
			Message: &remote.SpawnRequest{Kind: "echo", RequestID: p.seq},
		}))
	}
	for range n {
		select {
		case a := <-p.answers:
			switch {
			case a.Err == "":
				spawned = append(spawned, a.PID)
			case strings.HasPrefix(a.Err, "too-many: "):
				refused++
			default:
				p.t.Fatalf("unexpected answer %q", a.Err)
			}
		case <-ctxWait(p.t).Done():
			p.t.Fatal("timed out waiting for spawn answers")
		}
	}
	return spawned, refused
}

// The live actors that one peer address spawned are at most
// Config.MaxSpawnsPerPeer: 100 requests from a bare connection against a
// bound of 16 spawn 16 actors, the other 84 are refused (answered with the
// too-many code, Stats.SpawnsRefused); the stop of 4 of them frees 4
// places, and no more; another peer address has places of its own.
// Before, every request spawned an actor: 200 000 from one connection
// held 200 000 actors and some 84 MiB of heap.
func TestSpawnsPerPeerBounded(t *testing.T) {
	cfg := testConfig(t)
	cfg.Kinds = map[string]*actor.Props{"echo": echoProps("b")}
	cfg.MaxSpawnsPerPeer = 16
	sysB, rb := startSystem(t, "b", cfg)
	before := sysB.ProcessCount()

	p := newSpawnPeer(t, rb.Address())
	spawned, refused := p.spawn(100)
	require.Len(t, spawned, 16)
	require.Equal(t, 84, refused)
	assert.Equal(t, uint64(84), rb.Node().Stats().SpawnsRefused)
	assert.Equal(t, before+16, sysB.ProcessCount())
	assert.Equal(t, 16, rb.SpawnedBy(p.node.Address()))

	// A stop frees a place: its Terminated reaches the count before the
	// StopFuture completes (the actor's watchers are told first).
	for _, pid := range spawned[:4] {
		require.NoError(t, sysB.Root().StopFuture(actor.NewPID(pid.Address, pid.ID)).Wait())
	}
	require.Equal(t, 12, rb.SpawnedBy(p.node.Address()))
	again, refused := p.spawn(5)
	require.Len(t, again, 4)
	require.Equal(t, 1, refused)

	// Per address: another peer spawns as many.
	q := newSpawnPeer(t, rb.Address())
	other, refused := q.spawn(17)
	require.Len(t, other, 16)
	require.Equal(t, 1, refused)

	// The places go back as the actors stop, whoever stops them.
	for _, pid := range append(append(spawned[4:], again...), other...) {
		require.NoError(t, sysB.Root().StopFuture(actor.NewPID(pid.Address, pid.ID)).Wait())
	}
	assert.Equal(t, 0, rb.SpawnedBy(p.node.Address()))
	assert.Equal(t, 0, rb.SpawnedBy(q.node.Address()))
	assert.Equal(t, before, sysB.ProcessCount())
}

// The spawner's Remote.SpawnNamed returns the refusal as
// ErrTooManySpawns, and a failed spawn (a name taken) takes no place.
func TestSpawnNamedTooManySpawns(t *testing.T) {
	cfgB := testConfig(t)
	cfgB.Kinds = map[string]*actor.Props{"echo": echoProps("b")}
	cfgB.MaxSpawnsPerPeer = 2
	_, rb := startSystem(t, "b", cfgB)
	sysA, ra := startSystem(t, "a", testConfig(t))

	_, err := ra.SpawnNamed(ctxWait(t), rb.Address(), "one", "echo")
	require.NoError(t, err)
	_, err = ra.SpawnNamed(ctxWait(t), rb.Address(), "one", "echo")
	require.ErrorIs(t, err, actor.ErrNameExists)
	two, err := ra.SpawnNamed(ctxWait(t), rb.Address(), "", "echo")
	require.NoError(t, err)
	_, err = ra.SpawnNamed(ctxWait(t), rb.Address(), "three", "echo")
	require.ErrorIs(t, err, remote.ErrTooManySpawns)
	require.NotErrorIs(t, err, remote.ErrSpawnFailed)

	// A stop, here by the spawner itself, frees a place.
	require.NoError(t, sysA.Root().StopFuture(actor.NewPID(two.Address, two.ID)).Wait())
	_, err = ra.SpawnNamed(ctxWait(t), rb.Address(), "three", "echo")
	require.NoError(t, err)
}
