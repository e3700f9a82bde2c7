package testkit_test

// The harness of the differential tests (diff_*_test.go): one grain kind,
// diffGrain, whose every observable step goes into a journal the test
// reads, run (a) under the grain testkit the docs recommend (NewGrain) and
// (b) in a real cluster (NewCluster: cluster.Install on the in-memory
// provider, with real loopback TCP between members where two take part),
// so that the two journals and the replies can be compared.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// journal records what the grains of one side did, in order. Safe for
// concurrent use: the cluster's grains run on its workers.
type journal struct {
	mu      sync.Mutex
	lines   []string
	changed chan struct{} // closed and replaced at every add
}

func newJournal() *journal { return &journal{changed: make(chan struct{})} }

func (j *journal) add(format string, args ...any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.lines = append(j.lines, fmt.Sprintf(format, args...))
	close(j.changed)
	j.changed = make(chan struct{})
}

func (j *journal) snapshot() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.lines)
}

// waitFor waits, in wall time (a real cluster's side), until cond holds
// for the journal's lines, and fails the test at d. It waits on the
// journal's changes, not on a sleep.
func (j *journal) waitFor(t testing.TB, d time.Duration, what string, cond func([]string) bool) []string {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		j.mu.Lock()
		lines, ch := slices.Clone(j.lines), j.changed
		j.mu.Unlock()
		if cond(lines) {
			return lines
		}
		select {
		case <-ch:
		case <-timer.C:
			t.Fatalf("journal: %s not within %v; have %q", what, d, lines)
			return nil
		}
	}
}

// count is how many lines equal line.
func count(lines []string, line string) int {
	n := 0
	for _, l := range lines {
		if l == line {
			n++
		}
	}
	return n
}

// Messages of diffGrain (JSON across members).
type (
	// dNote is recorded with whether it has a sender, and answered
	// "ok "+S when it has one.
	dNote struct{ S string }
	// dPanic panics in the grain's Receive.
	dPanic struct{}
	// dSilent is recorded and never answered.
	dSilent struct{}
	// dStopSelf stops the grain (ctx.Stop(ctx.Self())).
	dStopSelf struct{}
	// dPassivate passivates the grain (cluster.Passivate).
	dPassivate struct{}
	// dSendSelfThenStop Sends dNote{S+"1"} and dNote{S+"2"} to the grain's
	// own identity, then stops the grain.
	dSendSelfThenStop struct{ S string }
	// dPassivateThenSendSelf passivates the grain, then Sends dNote{S+"1"}
	// and dNote{S+"2"} to its own identity.
	dPassivateThenSendSelf struct{ S string }
	// dPipeThenStop calls To with dNote{S}, pipes the future's result to
	// itself (PipeTo) and stops itself.
	dPipeThenStop struct {
		To cluster.Identity
		S  string
	}
	// dTick starts a periodic timer of Every that delivers dTicked.
	dTick struct{ Every time.Duration }
	// dTicked is the timer's tick.
	dTicked struct{}
	// dIdleTimeout sets the grain's receive timeout to D (0: off).
	dIdleTimeout struct{ D time.Duration }
	// dUntick cancels the timer.
	dUntick struct{}
	// dToken is answered with the activation's fencing token Seq.
	dToken struct{}
	// dCall calls the grain To with Msg through RequestFuture and
	// ReenterAfter, and answers with what came back: "reply <v>" or
	// "error <class>".
	dCall struct {
		To      cluster.Identity
		Msg     any `json:"-"`
		S       string
		Timeout time.Duration // of the RequestFuture; 0: RequestTimeout
	}
)

func diffMessages(s *remote.Serializers) error {
	return errors.Join(
		remote.RegisterJSON[*dNote](s, "diff.note"),
		remote.RegisterJSON[*dPanic](s, "diff.panic"),
		remote.RegisterJSON[*dSilent](s, "diff.silent"),
		remote.RegisterJSON[*dStopSelf](s, "diff.stopself"),
		remote.RegisterJSON[*dPassivate](s, "diff.passivate"),
		remote.RegisterJSON[*dSendSelfThenStop](s, "diff.sendselfstop"),
		remote.RegisterJSON[*dPassivateThenSendSelf](s, "diff.passivatesendself"),
		remote.RegisterJSON[*dPipeThenStop](s, "diff.pipestop"),
		remote.RegisterJSON[*dTick](s, "diff.tick"),
		remote.RegisterJSON[*dUntick](s, "diff.untick"),
		remote.RegisterJSON[*dIdleTimeout](s, "diff.idletimeout"),
		remote.RegisterJSON[*dToken](s, "diff.token"),
		remote.RegisterJSON[*dCall](s, "diff.call"),
		remote.RegisterJSON[string](s, "diff.string"),
	)
}

// diffConf configures diffGrain.
type diffConf struct {
	kind      string
	idle      time.Duration // 0: the default
	failStart int           // the first failStart Started handlers panic
	stopLater bool          // every activation after the first stops itself in Started
}

// diffKind is the kind of diffGrain, recording into j.
func diffKind(j *journal, conf diffConf) cluster.Kind {
	var mu sync.Mutex
	starts := 0
	props := actor.PropsFromProducer(func() actor.Actor { return &diffGrain{j: j} })
	props = props.With(actor.WithReceiveMiddleware(func(next actor.ReceiveFunc) actor.ReceiveFunc {
		return func(c actor.Context) {
			if _, ok := c.Message().(*actor.Started); ok {
				mu.Lock()
				starts++
				fail := starts <= conf.failStart
				mu.Unlock()
				if fail {
					j.add("started (failing)")
					panic("diff: refusing to start")
				}
				if conf.stopLater && starts > 1 {
					next(c)
					j.add("stops in Started")
					c.Stop(c.Self())
					return
				}
			}
			next(c)
		}
	}))
	var opts []cluster.KindOption
	if conf.idle != 0 {
		opts = append(opts, cluster.WithIdleTimeout(conf.idle))
	}
	return cluster.NewKind(conf.kind, props, opts...)
}

type diffGrain struct {
	j *journal
}

func (d *diffGrain) Receive(c actor.Context) {
	j := d.j
	id, _ := cluster.IdentityOf(c)
	switch m := c.Message().(type) {
	case *actor.Started:
		tok, _ := cluster.FencingTokenOf(c)
		_ = tok
		j.add("%s started", id.ID)
	case *actor.Stopping:
		j.add("%s stopping", id.ID)
	case *actor.Stopped:
		j.add("%s stopped", id.ID)
	case *actor.Restarting:
		j.add("%s restarting", id.ID)
	case *dNote:
		j.add("%s note %s sender=%t", id.ID, m.S, c.Sender() != nil)
		if c.Sender() != nil {
			c.Respond("ok " + m.S)
		}
	case *dPanic:
		j.add("%s panic", id.ID)
		panic("diff: told to panic")
	case *dSilent:
		j.add("%s silent", id.ID)
	case *dStopSelf:
		j.add("%s stop self", id.ID)
		c.Stop(c.Self())
	case *dPassivate:
		j.add("%s passivate", id.ID)
		cluster.Passivate(c)
	case *dSendSelfThenStop:
		j.add("%s send self %s, stop", id.ID, m.S)
		cluster.Get(c.System()).Send(id, &dNote{S: m.S + "1"})
		cluster.Get(c.System()).Send(id, &dNote{S: m.S + "2"})
		c.Stop(c.Self())
	case *dPipeThenStop:
		j.add("%s pipe from %s, stop", id.ID, m.To)
		cluster.Get(c.System()).RequestFuture(m.To, &dNote{S: m.S}, 0).PipeTo(c.Self())
		c.Stop(c.Self())
	case string:
		j.add("%s got %q sender=%t", id.ID, m, c.Sender() != nil)
	case *dPassivateThenSendSelf:
		j.add("%s passivate, send self %s", id.ID, m.S)
		cluster.Passivate(c)
		cluster.Get(c.System()).Send(id, &dNote{S: m.S + "1"})
		cluster.Get(c.System()).Send(id, &dNote{S: m.S + "2"})
	case *dTick:
		j.add("%s tick every %v", id.ID, m.Every)
		c.Timers().StartPeriodic("tick", m.Every, &dTicked{})
		c.Respond("ticking")
	case *dTicked:
		j.add("%s ticked", id.ID)
	case *dIdleTimeout:
		j.add("%s receive timeout %v", id.ID, m.D)
		c.SetReceiveTimeout(m.D)
		c.Respond("set")
	case *actor.ReceiveTimeout:
		j.add("%s receive timeout fired", id.ID)
	case *dUntick:
		j.add("%s untick", id.ID)
		c.Timers().Cancel("tick")
		c.Respond("unticked")
	case *dToken:
		tok, _ := cluster.FencingTokenOf(c)
		c.Respond(tok.Seq)
	case *dCall:
		j.add("%s call %s %s", id.ID, m.To, m.S)
		msg := m.Msg
		if msg == nil {
			msg = &dNote{S: m.S}
		}
		sender := c.Sender()
		f := cluster.Get(c.System()).RequestFuture(m.To, msg, m.Timeout)
		c.ReenterAfter(f, func(res any, err error) {
			out := fmt.Sprintf("reply %v", res)
			if err != nil {
				out = "error " + errClass(err)
			}
			j.add("%s call %s %s: %s", id.ID, m.To, m.S, out)
			if sender != nil {
				c.Send(sender, out)
			}
		})
	default:
		j.add("%s other %T", id.ID, m)
	}
}

// errClass names the kind of a grain call's error, for comparing the
// sides: the sentinel or type it matches, not its text.
func errClass(err error) string {
	var af *cluster.ActivationFailedError
	var ge *cluster.GrainError
	switch {
	case err == nil:
		return "nil"
	case errors.As(err, &ge):
		return "GrainError(" + ge.Code + ")"
	case errors.As(err, &af):
		return "ActivationFailed"
	case errors.Is(err, cluster.ErrNoSuchKind):
		return "ErrNoSuchKind"
	case errors.Is(err, cluster.ErrInvalidIdentity):
		return "ErrInvalidIdentity"
	case errors.Is(err, cluster.ErrTimeout):
		return "ErrTimeout"
	}
	return "other: " + err.Error()
}

// diffCluster starts a real cluster of n members hosting kinds, with real
// loopback TCP between them when n > 1, and the diff messages registered.
func diffCluster(t *testing.T, n int, kinds ...cluster.Kind) *testkit.TestCluster {
	opts := []testkit.ClusterOption{testkit.Nodes(n), testkit.Kinds(kinds...), testkit.Serializers(diffMessages)}
	if n > 1 {
		opts = append(opts, testkit.TCP())
	}
	return testkit.NewCluster(t, opts...)
}

// lines is a journal's lines as one string per line, for failures.
func lines(l []string) string { return "\n\t" + strings.Join(l, "\n\t") }

// requireSame fails the test unless the two sides' lines are equal.
func requireSame(t *testing.T, what string, kit, real []string) {
	t.Helper()
	if !slices.Equal(kit, real) {
		t.Fatalf("%s differs:\nNewGrain:%s\ncluster:%s", what, lines(kit), lines(real))
	}
}

func diffCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
