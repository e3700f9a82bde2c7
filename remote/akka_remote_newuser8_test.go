package remote_test

// Remote semantics an Akka/Pekko developer relies on (docs/coming-from-akka.md).

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/router"
	"github.com/fraktor-go/fraktor/testkit"
)

type AkkaSeq struct{ N int }

func akkaNode(t *testing.T, kinds map[string]*actor.Props) *actor.System {
	t.Helper()
	ser := remote.NewSerializers()
	if err := remote.RegisterJSON[*AkkaSeq](ser, "akka.AkkaSeq"); err != nil {
		t.Fatal(err)
	}
	cfg := remote.DefaultConfig()
	cfg.ListenAddress = "127.0.0.1:0"
	cfg.Serializers = ser
	cfg.Kinds = kinds
	cfg.GiveUpAfter = 300 * time.Millisecond
	cfg.ReconnectBackoffMin, cfg.ReconnectBackoffMax = 5*time.Millisecond, 50*time.Millisecond
	return testkit.NewPeerSystem(t, func(c *actor.SystemConfig) {
		c.Extensions = []actor.ExtensionInstaller{remote.Install(cfg)}
	})
}

// Across nodes: messages from one sender keep their order, a watch placed
// twice gives one Terminated, and it comes after every message the remote
// actor sent before it stopped (Akka's remote death watch guarantees this).
func TestAkkaRemoteWatchOrderAndOnce(t *testing.T) {
	a, b := akkaNode(t, nil), akkaNode(t, nil)
	probe := testkit.NewProbe(t, a)
	const n = 200
	watcher := a.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.PID:
			c.Watch(m)
			c.Watch(m)
			c.Request(m, &AkkaSeq{N: -1}) // start: behind both watches
		case *AkkaSeq, *actor.Terminated:
			c.Send(probe.PID(), m)
		}
	}))
	talker := b.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*AkkaSeq); ok && m.N == -1 {
			for i := 0; i < n; i++ {
				c.Send(c.Sender(), &AkkaSeq{N: i})
			}
			c.Stop(c.Self())
		}
	}))
	a.Root().Send(watcher, actor.NewPID(b.Address(), talker.ID))
	for i := 0; i < n; i++ {
		got := testkit.ExpectMsg[*AkkaSeq](probe, 5*time.Second)
		if got.N != i {
			t.Fatalf("message %d arrived as %d", i, got.N)
		}
	}
	term := testkit.ExpectMsg[*actor.Terminated](probe, 5*time.Second)
	if term.Why != actor.TerminatedStopped {
		t.Fatalf("Terminated %v", term.Why)
	}
	probe.ExpectNoMsg(200 * time.Millisecond)
}

// Watching a remote PID that has no actor answers Terminated{NotFound}.
func TestAkkaRemoteWatchNonexistent(t *testing.T) {
	a, b := akkaNode(t, nil), akkaNode(t, nil)
	probe := testkit.NewProbe(t, a)
	ghost := actor.NewPID(b.Address(), "ghost")
	probe.Watch(ghost)
	if term := probe.ExpectTerminated(ghost, 5*time.Second); term == nil || term.Why != actor.TerminatedNotFound {
		t.Fatalf("got %v", term)
	}
}

// A PoisonPill sent across nodes is handled after the messages sent before it.
func TestAkkaRemotePoisonPillAfterQueued(t *testing.T) {
	a, b := akkaNode(t, nil), akkaNode(t, nil)
	probe := testkit.NewProbe(t, b)
	target := b.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*AkkaSeq); ok {
			c.Send(probe.PID(), m.N)
		}
	}))
	probe.Watch(target)
	remotePID := actor.NewPID(b.Address(), target.ID)
	for i := 0; i < 50; i++ {
		a.Root().Send(remotePID, &AkkaSeq{N: i})
	}
	a.Root().Poison(remotePID)
	for i := 0; i < 50; i++ {
		probe.ExpectMsgEqual(i, 5*time.Second)
	}
	probe.ExpectTerminated(target, 5*time.Second)
}

// A remote spawn whose kind panics in its producer: the spawn succeeds and
// the actor fails on its first turn (a supervised failure on the remote
// node), as locally; a kind that does not exist is refused.
func TestAkkaRemoteSpawnPanickingKind(t *testing.T) {
	a := akkaNode(t, nil)
	b := akkaNode(t, map[string]*actor.Props{"bad": actor.PropsFromProducer(func() actor.Actor { panic("no config") })})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pid, err := remote.Get(a).SpawnNamed(ctx, b.Address(), "bad-1", "bad")
	t.Logf("remote spawn of a panicking kind: %v %v", pid, err)
	if err == nil {
		probe := testkit.NewProbe(t, a)
		probe.Watch(pid)
		probe.ExpectTerminated(pid, 5*time.Second) // 11 failed starts, then stopped
	}
}

// A group router over remote routees drops a routee whose node crashes
// (the router watches them), so later messages go to the live ones.
func TestAkkaRemoteGroupDropsDeadNode(t *testing.T) {
	a, b, c := akkaNode(t, nil), akkaNode(t, nil), akkaNode(t, nil)
	worker := func(sys *actor.System, name string) *actor.PID {
		pid, err := sys.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
			if _, ok := c.Message().(*AkkaSeq); ok {
				c.Respond(&AkkaSeq{N: len(name)})
			}
		}), name)
		if err != nil {
			t.Fatal(err)
		}
		return actor.NewPID(sys.Address(), pid.ID)
	}
	wb, wc := worker(b, "b"), worker(c, "cc")
	group, err := router.SpawnGroup(a.Root(), router.RoundRobin(), []*actor.PID{wb, wc})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := 0; i < 4; i++ {
		if _, err := actor.Request[*AkkaSeq](ctx, a.Root(), group, &AkkaSeq{}); err != nil {
			t.Fatal(err)
		}
	}
	dead, kill := context.WithCancel(context.Background())
	kill()
	_ = c.Shutdown(dead) // a crash: no goodbye
	<-c.Terminated()
	probe := testkit.NewProbe(t, a)
	probe.Watch(wc)
	probe.ExpectTerminated(wc, 5*time.Second)
	testkit.Eventually(t, func() bool {
		r, err := actor.Request[*router.Routees](ctx, a.Root(), group, &router.GetRoutees{})
		return err == nil && len(r.PIDs) == 1
	}, 5*time.Second, "the dead routee leaves the group")
	for i := 0; i < 4; i++ {
		got, err := actor.Request[*AkkaSeq](ctx, a.Root(), group, &AkkaSeq{})
		if err != nil || got.N != 1 {
			t.Fatalf("request %d: %v %v", i, got, err)
		}
	}
}

// A request to a remote PID with no actor fails at once with ErrDeadLetter
// (the remote node answers), not at the deadline; one the remote actor does
// not answer ends with ErrTimeout.
func TestAkkaRemoteAskDeadLetterVersusTimeout(t *testing.T) {
	a, b := akkaNode(t, nil), akkaNode(t, nil)
	silent, err := b.Root().SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), "silent")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err = actor.Request[*AkkaSeq](ctx, a.Root(), actor.NewPID(b.Address(), "ghost"), &AkkaSeq{})
	if !errors.Is(err, actor.ErrDeadLetter) {
		t.Fatalf("ghost: %v", err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Fatalf("the dead letter took %v", d)
	}
	short, cancelShort := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancelShort()
	_, err = actor.Request[*AkkaSeq](short, a.Root(), actor.NewPID(b.Address(), silent.ID), &AkkaSeq{})
	if !errors.Is(err, actor.ErrTimeout) {
		t.Fatalf("silent: %v", err)
	}
}
