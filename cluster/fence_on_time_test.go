package cluster_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/cluster/internal/clusterpb"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// A member fences when its lease is no longer valid past the stop budget,
// not at its next tick: with a TickInterval longer than StopBudget (a valid
// config; the timing relations do not involve it), a member evicted while
// cut off from the registry stopped its grains up to TickInterval after
// deadline − S, and the others, which take over W after the eviction, had
// activated them already: two activations of one identity, the old one's
// Stopping and Stopped handlers (where a grain saves its state) running
// after its successor started. Manual clock: the lease deadline is 2 s
// after the last renewal, W 3.061 s after the eviction, the tick every 10 s;
// the evicted member's grain now stops 1.5 s after its last renewal, and
// before, 10 s after the tick its lost lease asked for.
func TestClusterFencesOnTimeWhateverTheTick(t *testing.T) {
	clock, reg := manualRegistry(t)
	start := func(p cluster.Provider, logger *slog.Logger) node {
		ccfg := cluster.Config{Name: "shop", Provider: p, Kinds: []cluster.Kind{counterKind()}}
		ccfg.TickInterval = 10 * time.Second
		rcfg := remote.DefaultConfig()
		rcfg.ListenAddress, rcfg.SystemName, rcfg.Serializers = "127.0.0.1:0", "shop", serializers(t)
		sys := testkit.NewPeerSystem(t, func(c *actor.SystemConfig) {
			c.Name = "shop"
			c.Clock = clock
			if logger != nil {
				c.Logger = logger
			}
			c.Extensions = []actor.ExtensionInstaller{remote.Install(rcfg), cluster.Install(ccfg)}
		})
		return node{sys: sys, c: cluster.Get(sys)}
	}
	// b cannot come back once cut off: its new incarnation would own the
	// identity again (and grant nothing for W).
	gate := &joinGate{Provider: reg}
	// b's membership goroutine logs the stale view after it handled the
	// lost lease (the feed emits them in that order): by then it has asked
	// b's placement actor for a tick.
	stale := make(chan struct{}, 16)
	a := start(reg, nil)
	b := start(gate, slog.New(signalHandler{msg: "cluster: membership view stale, keeping the last view", ch: stale}))
	awaitMembers(t, 2, a, b)
	ctx := ctxWait(t)
	// The placement actor answers in order: once it has, what was sent to
	// it before is handled.
	handled := func(nd node) {
		t.Helper()
		placement := actor.NewPID(nd.sys.Address(), "$placement")
		_, err := nd.sys.Root().RequestFuture(placement, &clusterpb.ActivationRequest{Kind: "other", Id: "x"}, 0).ResultContext(ctx)
		require.NoError(t, err)
	}
	// advance moves the clock on by d in steps, both placement actors
	// handling what each step brought.
	advance := func(d time.Duration) {
		t.Helper()
		for end := clock.Now().Add(d); clock.Now().Before(end); {
			clock.Advance(100 * time.Millisecond)
			handled(a)
			handled(b)
		}
	}
	// Past the first tick: each member has the other's view acknowledgement
	// (the one sent with the view may come before the other has a view).
	advance(10500 * time.Millisecond)
	ids := identitiesOn(t, ctx, a, b, 1, 100)
	require.Len(t, ids, 1)
	id := ids[0]
	endedOnB := first(t, b.sys, func(ev *cluster.ActivationTerminated) bool {
		return ev.Identity == id && ev.PID.Address == b.sys.Address()
	})
	startedOnA := first(t, a.sys, func(ev *cluster.ActivationStarted) bool { return ev.Identity == id })

	// b is cut off from the registry (it hears of nothing) and evicted:
	// a sees it gone now and takes over its identities W later.
	key := b.c.Self().Key()
	gate.closed.Store(true)
	reg.Partition(key)
	t.Cleanup(func() { reg.Heal(key) })
	require.NoError(t, reg.Evict(ctx, b.c.Self()))
	awaitMembers(t, 1, a)
	// b's next renewal fails: its lease is lost, valid 1.5 s more (its
	// fence time 1 s on); the tick the lost lease asks for does not fence.
	advance(cluster.DefaultMemoryConfig().RenewInterval)
	select {
	case <-stale:
	case <-time.After(wait):
		t.Fatal("b never handled its lost lease")
	}
	handled(b)
	advance(3500 * time.Millisecond) // past W after the eviction, before b's next periodic tick
	who, err := cluster.Request[*Identity](ctx, a.c, id, &WhoAmI{})
	require.NoError(t, err)
	require.Equal(t, a.sys.Address(), who.Member, "a took the identity over")
	began := startedOnA().At
	ended := endedOnB().At // fails here before: b stops its grain only at its next tick, 20 s in
	require.False(t, ended.After(began), "b's activation ended at %v, after a's began at %v", ended, began)
}
