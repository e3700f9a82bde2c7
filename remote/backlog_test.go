package remote_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// holdHold is the Seq.N that makes holdingActor wait in Receive.
const holdHold = -1

// holdingActor spawns, on sys, an actor named name that, on Seq{N:
// holdHold}, closes the returned busy channel and waits in Receive until
// release is called (at the test's end too); it passes the N of every
// other Seq to got, and answers Echo. It runs on the blocking pool.
func holdingActor(t *testing.T, sys *actor.System, name string) (pid *actor.PID, got <-chan int, busy <-chan struct{}, release func()) {
	t.Helper()
	ch, b, rel := make(chan int, 1<<14), make(chan struct{}), make(chan struct{})
	pid, err := sys.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *Seq:
			if m.N == holdHold {
				close(b)
				<-rel
				return
			}
			ch <- m.N
		case *Echo:
			c.Respond(&EchoReply{Text: m.Text})
		}
	}, actor.WithBlocking()), name) // it blocks: not on the shared workers (with -cpu 1, the only one)
	require.NoError(t, err)
	var once bool
	release = func() {
		if !once {
			once = true
			close(rel)
		}
	}
	t.Cleanup(release)
	return pid, ch, b, release
}

// expectSeq takes want, in this order, from got.
func expectSeq(t *testing.T, got <-chan int, want ...int) {
	t.Helper()
	ctx := ctxWait(t)
	for _, w := range want {
		select {
		case g := <-got:
			require.Equal(t, w, g)
		case <-ctx.Done():
			t.Fatalf("message %d did not arrive", w)
		}
	}
}

func span(from, to int) []int {
	s := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

// A peer cannot make a node hold more than Config.MaxMailboxBacklog
// messages for a local actor that does not keep up. A bare connection
// sends 5 000 messages to an actor blocked in Receive, against a bound of
// 100: the mailbox takes at most 100, the first ones, in order; the others
// are dead letters with actor.ErrBacklogFull (which wraps
// actor.ErrMailboxFull), counted in Stats.BacklogRefused, and the reader
// goes on (a request to another actor behind them is answered). Local
// senders are not refused. Once the actor has drained its mailbox, the
// peer's messages are taken again. Before, every message was queued: a
// million from a bare connection held some 48 MiB.
func TestMailboxBacklogFromPeerBounded(t *testing.T) {
	const bound, sent = 100, 5000
	cfg := testConfig(t)
	cfg.MaxMailboxBacklog = bound
	sysB, rb := startSystem(t, "b", cfg)
	slow, got, busy, release := holdingActor(t, sysB, "slow")
	echo := echoOn(t, sysB, "echo", "b")
	refusals := events[*actor.DeadLetterEvent](t, sysB)

	peer, replies := barePeer(t)
	to := remote.PIDRef{Address: rb.Address(), ID: slow.ID}
	send := func(n int) {
		require.NoError(t, peer.Send(rb.Address(), remote.Envelope{Target: to, Message: &Seq{N: n}}))
	}
	// marker sends a request to another actor and waits for its answer:
	// the reader has delivered everything the peer sent before it.
	marker := func() {
		t.Helper()
		require.NoError(t, peer.Send(rb.Address(), remote.Envelope{
			Target:  remote.PIDRef{Address: rb.Address(), ID: echo.ID},
			Sender:  remote.PIDRef{Address: peer.Address(), ID: "asker"},
			Message: &Echo{Text: "marker"},
		}))
		select {
		case <-replies:
		case <-ctxWait(t).Done():
			t.Fatal("the reader stalled: no answer from another actor")
		}
	}
	send(holdHold)
	<-busy

	dead := sysB.DeadLetters()
	for i := range sent {
		send(i)
	}
	marker()
	marker() // in a later frame: the reader has counted the earlier ones (Stats adds a frame's refusals at its end)
	refused := int(rb.Node().Stats().BacklogRefused)
	accepted := sent - refused
	require.LessOrEqual(t, accepted, bound, "the mailbox holds at most the bound")
	require.Positive(t, accepted)
	require.Equal(t, dead+uint64(refused), sysB.DeadLetters(), "every refused message is a dead letter")
	e := waitFor(t, refusals, "a dead letter of a refused message", deadLetterWith(actor.ErrMailboxFull))
	require.ErrorIs(t, e.Reason, actor.ErrBacklogFull)
	require.Equal(t, slow.ID, e.PID.ID)

	for i := range 50 { // local senders: never refused
		sysB.Root().Send(slow, &Seq{N: 10000 + i})
	}
	release()
	expectSeq(t, got, append(span(0, accepted), span(10000, 10050)...)...)

	// Drained: the peer's messages are taken again.
	for i := range 50 {
		send(20000 + i)
	}
	marker()
	expectSeq(t, got, span(20000, 20050)...)
	assert.Equal(t, uint64(refused), rb.Node().Stats().BacklogRefused)
	select {
	case n := <-got:
		t.Fatalf("refused message %d was delivered", n)
	default:
	}
}

// A request from a real peer to an actor whose mailbox is at the bound
// fails on the peer at once with actor.ErrMailboxFull (wrapped in
// actor.ErrDeadLetter), not with a timeout; so does a PoisonFuture (its
// pill is a user message, and refused like one). A Stop is a system
// message and is never refused. Once the actor has drained its mailbox,
// requests are answered again.
func TestRequestToBackloggedActorFailsAtOnce(t *testing.T) {
	cfgB := testConfig(t)
	cfgB.MaxMailboxBacklog = 10
	sysB, rb := startSystem(t, "b", cfgB)
	sysA, _ := startSystem(t, "a", testConfig(t))
	slow, got, busy, release := holdingActor(t, sysB, "slow")
	target := remotePID(slow)

	sysA.Root().Send(target, &Seq{N: holdHold})
	<-busy
	for i := range 20 {
		sysA.Root().Send(target, &Seq{N: i})
	}
	_, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), target, &Echo{Text: "refused"})
	require.ErrorIs(t, err, actor.ErrDeadLetter)
	require.ErrorIs(t, err, actor.ErrMailboxFull, "the refusal's reason reaches the caller")
	require.NotErrorIs(t, err, actor.ErrTimeout)

	f := sysA.Root().PoisonFuture(target)
	select {
	case <-f.Done():
	case <-ctxWait(t).Done():
		t.Fatal("the future of a refused pill is still pending")
	}
	_, err = f.Result()
	require.ErrorIs(t, err, actor.ErrMailboxFull)

	release()
	// A local request (never refused) is answered once the actor has taken
	// the Seqs queued before it: the first ones, in order.
	_, err = actor.Request[*EchoReply](ctxWait(t), sysB.Root(), slow, &Echo{Text: "local"})
	require.NoError(t, err)
	accepted := 0
	for len(got) > 0 {
		require.Equal(t, accepted, <-got)
		accepted++
	}
	require.LessOrEqual(t, accepted, 10)
	reply, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), target, &Echo{Text: "again"})
	require.NoError(t, err, "drained: taken again")
	require.Equal(t, "again", reply.Text)
	// The request came in a later frame than the refused messages, whose
	// refusals Stats counted at the end of theirs.
	require.Equal(t, uint64(20-accepted+2), rb.Node().Stats().BacklogRefused)

	// A Stop from the peer reaches an actor at the bound.
	other, _, otherBusy, otherRelease := holdingActor(t, sysB, "other")
	probe := testkit.NewProbe(t, sysB)
	probe.Watch(other)
	otherTarget := remotePID(other)
	sysA.Root().Send(otherTarget, &Seq{N: holdHold})
	<-otherBusy
	for i := range 20 {
		sysA.Root().Send(otherTarget, &Seq{N: i})
	}
	sysA.Root().Stop(otherTarget)
	_, err = actor.Request[*EchoReply](ctxWait(t), sysA.Root(), otherTarget, &Echo{Text: "after stop"})
	require.ErrorIs(t, err, actor.ErrMailboxFull, "the Stop went ahead of this request, which was refused")
	otherRelease()
	probe.ExpectTerminated(other, wait)
}

// Messages from a peer that do not go in the reader's runs (the system
// serializer's messages that name a local actor: a PoisonPillRequest, or a
// Ping sent to an actor, which gets it as a user message) are bounded one
// by one.
func TestMailboxBacklogBoundsMessagesOutsideRuns(t *testing.T) {
	const bound, sent = 10, 50
	cfg := testConfig(t)
	cfg.MaxMailboxBacklog = bound
	sysB, rb := startSystem(t, "b", cfg)
	slow, _, busy, _ := holdingActor(t, sysB, "slow")
	echo := echoOn(t, sysB, "echo", "b")
	peer, replies := barePeer(t)
	to := remote.PIDRef{Address: rb.Address(), ID: slow.ID}
	require.NoError(t, peer.Send(rb.Address(), remote.Envelope{Target: to, Message: &Seq{N: holdHold}}))
	<-busy
	dead := sysB.DeadLetters()
	for i := range sent {
		var msg any = &remote.Ping{Seq: uint64(i)}
		if i%2 == 1 {
			msg = &remote.PoisonPillRequest{}
		}
		require.NoError(t, peer.Send(rb.Address(), remote.Envelope{Target: to, Message: msg}))
	}
	require.NoError(t, peer.Send(rb.Address(), remote.Envelope{
		Target:  remote.PIDRef{Address: rb.Address(), ID: echo.ID},
		Sender:  remote.PIDRef{Address: peer.Address(), ID: "asker"},
		Message: &Echo{Text: "marker"},
	}))
	select {
	case <-replies: // the reader has delivered everything before it
	case <-ctxWait(t).Done():
		t.Fatal("no answer to the marker")
	}
	refused := rb.Node().Stats().BacklogRefused
	require.GreaterOrEqual(t, refused, uint64(sent-bound), "the mailbox holds at most the bound")
	require.Less(t, refused, uint64(sent), "the messages below the bound are taken")
	require.Equal(t, dead+refused, sysB.DeadLetters())
}
