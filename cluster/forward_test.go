package cluster_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// stopNow makes a forwardKind grain wait for release (after closing
// blocked) and then stop itself.
type stopNow struct{ blocked, release chan struct{} }

// received is an Add a forwardKind grain handled: which one, on which
// activation (its Started count), and the forward header's value.
type received struct {
	n          int
	activation int
	forwards   string
	member     string
}

// forwardKind records every Add it handles on adds, and the PID of each
// activation in selves (in process: both members run in this test).
type forwardKind struct {
	mu           sync.Mutex
	selves       map[string]*actor.PID
	starts       map[string]int // activations started, by ID
	adds         chan received
	stopStarted  bool // every activation stops itself as soon as it started
	stopFirst    bool // the first activation of each identity does
	panicStopped bool // every activation's Stopped handler panics
	// the first activation of each identity asks itself for holdDrain
	// (a dead letter when its mailbox drains) and stops
	stopFirstHeld bool
	opts          []cluster.KindOption
}

func newForwardKind() *forwardKind {
	return &forwardKind{selves: map[string]*actor.PID{}, starts: map[string]int{}, adds: make(chan received, 64)}
}

func (k *forwardKind) self(id cluster.Identity) *actor.PID {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.selves[id.ID]
}

func (k *forwardKind) kind() cluster.Kind {
	return cluster.NewKind("counter", actor.PropsFromProducer(func() actor.Actor {
		activation := 0
		return actor.ReceiveFunc(func(c actor.Context) {
			switch m := c.Message().(type) {
			case *actor.Started:
				id, _ := cluster.IdentityOf(c)
				k.mu.Lock()
				k.selves[id.ID] = c.Self()
				k.starts[id.ID]++
				activation = k.starts[id.ID]
				stop := k.stopStarted || k.stopFirst && activation == 1
				held := k.stopFirstHeld && activation == 1
				k.mu.Unlock()
				if held {
					c.Request(c.Self(), &holdDrain{})
					stop = true
				}
				if stop {
					c.Stop(c.Self())
				}
			case *actor.Stopped:
				k.mu.Lock()
				p := k.panicStopped
				k.mu.Unlock()
				if p {
					panic("Stopped handler fails")
				}
			case *Add:
				k.adds <- received{n: m.N, activation: activation, forwards: c.MessageHeader().Get(cluster.ForwardHeader), member: c.Self().Address}
			case *stopNow:
				close(m.blocked)
				<-m.release
				c.Stop(c.Self())
			case *WhoAmI:
				id, _ := cluster.IdentityOf(c)
				c.Respond(&Identity{Kind: id.Kind, ID: id.ID, Member: c.Self().Address})
			case *Sleep:
				cluster.Passivate(c)
				c.Respond(&Total{})
			}
		})
	}), k.opts...)
}

// forwardPair starts two members of one registry hosting a forwardKind.
func forwardPair(t *testing.T) (*forwardKind, node, node) {
	t.Helper()
	k := newForwardKind()
	reg := newRegistry(t)
	a, b := startMember(t, reg, k.kind()), startMember(t, reg, k.kind())
	awaitMembers(t, 2, a, b)
	return k, a, b
}

// noDeadLetters fails the test at once when nd has a dead letter.
func noDeadLetters(t *testing.T, nd node) chan *actor.DeadLetterEvent {
	t.Helper()
	dead := make(chan *actor.DeadLetterEvent, 16)
	sub := actor.Subscribe(nd.sys.EventStream(), func(e *actor.DeadLetterEvent) {
		select {
		case dead <- e:
		default:
		}
	})
	t.Cleanup(func() { nd.sys.EventStream().Unsubscribe(sub) })
	return dead
}

func (k *forwardKind) await(t *testing.T, dead chan *actor.DeadLetterEvent) received {
	t.Helper()
	select {
	case r := <-k.adds:
		return r
	case e := <-dead:
		t.Fatalf("dead letter %T %+v for %s", e.Message, e.Message, e.PID)
	case <-time.After(wait):
		t.Fatal("no Add arrived")
	}
	return received{}
}

// A Send that reaches an owner after its grain passivated, through the
// sender's PidCache entry for the old activation (as when the
// ActivationTerminated broadcast has not arrived, or was lost), goes on to
// the next activation instead of becoming a dead letter. Here member a
// sends to the PID of b's passivated grain directly.
func TestClusterSendToPassivatedGrainForwarded(t *testing.T) {
	k, a, b := forwardPair(t)
	ctx := ctxWait(t)
	id := identitiesOn(t, ctx, a, b, 1, 64)[0]
	old := k.self(id)
	require.Equal(t, b.sys.Address(), old.Address)

	ended := make(chan struct{}, 1)
	sub := actor.Subscribe(b.sys.EventStream(), func(e *cluster.ActivationTerminated) {
		if e.Identity == id {
			ended <- struct{}{}
		}
	})
	defer b.sys.EventStream().Unsubscribe(sub)
	_, err := cluster.Request[*Total](ctx, a.c, id, &Sleep{})
	require.NoError(t, err)
	select {
	case <-ended:
	case <-time.After(wait):
		t.Fatal("the grain never passivated")
	}

	dead := noDeadLetters(t, b)
	stale := actor.NewPID(old.Address, old.ID) // as a's PidCache held it
	for i := 1; i <= 3; i++ {
		a.sys.Root().Send(stale, &Add{N: i})
	}
	// The first is forwarded (nothing runs under that PID); the next
	// activation has the same PID, so those that arrive once it started
	// reach it directly, possibly before the forwarded one.
	got := map[int]bool{}
	forwarded := 0
	for range 3 {
		r := k.await(t, dead)
		got[r.n] = true
		assert.Equal(t, 2, r.activation, "handled by the next activation")
		if r.forwards == "1" {
			forwarded++
		} else {
			assert.Empty(t, r.forwards)
		}
	}
	assert.Equal(t, map[int]bool{1: true, 2: true, 3: true}, got)
	assert.GreaterOrEqual(t, forwarded, 1)
}

// Sends queued in a grain's mailbox when it stops (here it stops itself
// while handling the message before them) go on to its next activation, in
// order, instead of becoming dead letters.
func TestClusterSendsQueuedAtStopForwarded(t *testing.T) {
	k := newForwardKind()
	reader := sdkmetric.NewManualReader()
	nd := startMemberFull(t, newRegistry(t), func(*cluster.Config) {}, withMeter(reader), k.kind())
	awaitMembers(t, 1, nd)
	ctx := ctxWait(t)
	id := cluster.NewIdentity("counter", "q")
	_, err := cluster.Request[*Identity](ctx, nd.c, id, &WhoAmI{})
	require.NoError(t, err)

	dead := noDeadLetters(t, nd)
	stop := &stopNow{blocked: make(chan struct{}), release: make(chan struct{})}
	nd.c.Send(id, stop)
	<-stop.blocked
	for i := 1; i <= 5; i++ {
		nd.c.Send(id, &Add{N: i}) // into the stopping grain's mailbox
	}
	close(stop.release)
	for i := 1; i <= 5; i++ {
		r := k.await(t, dead)
		assert.Equal(t, i, r.n, "in the order sent")
		assert.Equal(t, 2, r.activation)
		assert.Equal(t, "1", r.forwards)
	}
	// The route leads to the new activation: later Sends go straight there.
	nd.c.Send(id, &Add{N: 6})
	r := k.await(t, dead)
	assert.Equal(t, received{n: 6, activation: 2, member: nd.sys.Address()}, r)
	fw, ok := collect(t, reader)["fraktor.cluster.forwards"].Data.(metricdata.Sum[int64])
	require.True(t, ok)
	require.Len(t, fw.DataPoints, 1)
	assert.EqualValues(t, 5, fw.DataPoints[0].Value)
}

// A message is forwarded at most three times: a grain whose every
// activation stops before it handles anything does not keep it circling.
// It then becomes a dead letter that says how often it was forwarded.
func TestClusterForwardsBounded(t *testing.T) {
	k := newForwardKind()
	nd := startMember(t, newRegistry(t), k.kind())
	awaitMembers(t, 1, nd)
	k.mu.Lock()
	k.stopStarted = true
	k.mu.Unlock()

	dead := make(chan *actor.DeadLetterEvent, 16)
	sub := actor.Subscribe(nd.sys.EventStream(), func(e *actor.DeadLetterEvent) {
		if _, ok := e.Message.(*Add); ok {
			dead <- e
		}
	})
	defer nd.sys.EventStream().Unsubscribe(sub)
	id := cluster.NewIdentity("counter", "doomed")
	nd.c.Send(id, &Add{N: 1})
	select {
	case e := <-dead:
		assert.Equal(t, &Add{N: 1}, e.Message)
	case <-time.After(wait):
		t.Fatal("the message kept circling")
	}
	select {
	case r := <-k.adds:
		t.Fatalf("a grain that stops when it starts handled %+v", r)
	default:
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	// The first delivery and three forwards: at most four activations
	// (fewer when a delivery found the previous one still stopping).
	assert.LessOrEqual(t, k.starts[id.ID], 4, fmt.Sprint(k.starts[id.ID]))
}

// A Send whose resolution found an activation that then stopped before the
// message reached it goes on to the next activation: the flight that
// delivered it there resolves again instead of handing it back to the same
// dead grain until its forwards run out.
func TestClusterSendOutlivesActivationEndingAtOnce(t *testing.T) {
	for range 5 {
		k := newForwardKind()
		k.stopFirst = true
		nd := startMember(t, newRegistry(t), k.kind())
		awaitMembers(t, 1, nd)
		dead := noDeadLetters(t, nd)
		nd.c.Send(cluster.NewIdentity("counter", "brief"), &Add{N: 1})
		r := k.await(t, dead)
		assert.Equal(t, 1, r.n)
		assert.Equal(t, 2, r.activation)
	}
}

// A Send that reaches the member a grain lived on after the identity moved
// to a member that joined goes on to the new owner's activation.
func TestClusterSendToMovedGrainForwarded(t *testing.T) {
	k := newForwardKind()
	reg := newRegistry(t)
	a, b := startMember(t, reg, k.kind()), startMember(t, reg, k.kind())
	awaitMembers(t, 2, a, b)
	ctx := ctxWait(t)
	onB := identitiesOn(t, ctx, a, b, 32, 256)
	old := map[cluster.Identity]*actor.PID{}
	for _, id := range onB {
		old[id] = k.self(id)
	}
	// An identity that leaves b when c joins can only go to c: wait for
	// b to stop the first one (its handover), then ask for it. (Asking
	// right after the views converged could reach b's grains before b had
	// handed any over, and find none moved.)
	handedOver := make(chan cluster.Identity, len(onB))
	bKey := b.c.Self().Key()
	sub := actor.Subscribe(b.sys.EventStream(), func(e *cluster.ActivationTerminated) {
		if _, ok := old[e.Identity]; ok && e.Member == bKey {
			handedOver <- e.Identity
		}
	})
	t.Cleanup(func() { b.sys.EventStream().Unsubscribe(sub) })
	c := startMember(t, reg, k.kind())
	awaitMembers(t, 3, a, b, c)
	var moved cluster.Identity
	select {
	case moved = <-handedOver:
	case <-ctx.Done():
		t.Fatal("no identity moved from b to c")
	}
	who, err := cluster.Request[*Identity](ctx, a.c, moved, &WhoAmI{})
	require.NoError(t, err)
	require.Equal(t, c.sys.Address(), who.Member, "%s moved from b", moved)

	dead := noDeadLetters(t, b)
	stale := old[moved]
	a.sys.Root().Send(actor.NewPID(stale.Address, stale.ID), &Add{N: 7})
	r := k.await(t, dead)
	assert.Equal(t, received{n: 7, activation: 2, forwards: "1", member: c.sys.Address()}, r)
}

// Sends from two members to grains that passivate between rounds (idle
// timeout): each round starts as soon as every activation has ended on its
// owner, so the other member's PidCache may still lead to the ended
// activation. No Send is lost: those that reach a gone grain are forwarded.
func TestClusterSendsSurvivePassivationChurn(t *testing.T) {
	const ids, rounds = 16, 8
	k := newForwardKind()
	k.opts = []cluster.KindOption{cluster.WithIdleTimeout(30 * time.Millisecond)}
	reg := fastRegistry(t)
	a, b := startMemberWith(t, reg, fastTiming, k.kind()), startMemberWith(t, reg, fastTiming, k.kind())
	awaitMembers(t, 2, a, b)

	var mu sync.Mutex
	live := 0
	idle := make(chan struct{}, 1)
	for _, nd := range []node{a, b} {
		// One subscription per member: its events arrive in order. Every
		// member hears of every termination (V4.2): count its own.
		self := nd.c.Self().Key()
		sub := nd.sys.EventStream().Subscribe(func(ev any) {
			mu.Lock()
			defer mu.Unlock()
			switch e := ev.(type) {
			case *cluster.ActivationStarted:
				live++
			case *cluster.ActivationTerminated:
				if e.Member != self {
					return
				}
				live--
				if live == 0 {
					select {
					case idle <- struct{}{}:
					default:
					}
				}
			}
		})
		t.Cleanup(func() { nd.sys.EventStream().Unsubscribe(sub) })
	}
	got := make(chan int, 1)
	go func() {
		n := 0
		for range k.adds {
			n++
			if n == 2*ids*rounds {
				got <- n
				return
			}
		}
	}()
	for r := range rounds {
		for i := range ids {
			id := cluster.NewIdentity("counter", fmt.Sprint(i))
			a.c.Send(id, &Add{N: 1})
			b.c.Send(id, &Add{N: 1})
		}
		select {
		case <-idle: // every activation passivated (checked after the sends)
		case <-time.After(wait):
			mu.Lock()
			n := live
			mu.Unlock()
			t.Fatalf("round %d: the grains never passivated (%d live; members %d/%d live)", r, n, a.c.ActiveCount(), b.c.ActiveCount())
		}
	}
	select {
	case n := <-got:
		require.Equal(t, 2*ids*rounds, n)
	case <-time.After(wait):
		t.Fatal("Sends were lost")
	}
}
