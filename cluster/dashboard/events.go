package dashboard

import (
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// Event is one cluster event as the dashboard shows it.
type Event struct {
	Seq    uint64    `json:"seq"`
	At     time.Time `json:"at"`
	Member string    `json:"member"` // the attached member that observed it
	Type   string    `json:"type"`
	Text   string    `json:"text"`
}

// eventLog is a ring of the most recent events. Appending never blocks for
// longer than a mutex held for a copy: it runs on the publisher's goroutine.
type eventLog struct {
	mu    sync.Mutex
	ring  []Event // grows to limit, then wraps
	limit int
	next  int
	seq   uint64
}

// newEventLog keeps the last n events. The ring grows as events come, not
// allocated up front: n is a bound (Config.Events may be math.MaxInt,
// TestDashboardLargeEventsBound).
func newEventLog(n int) *eventLog { return &eventLog{limit: n} }

// maxEventText bounds an event's text in bytes: texts carry identities and
// errors, user data of any size, and the log keeps a count of them, so
// only this keeps it (and every state response) bounded in bytes.
const maxEventText = 512

func (l *eventLog) add(member, typ string, at time.Time, format string, args ...any) {
	ev := Event{At: at, Member: member, Type: typ, Text: clip(fmt.Sprintf(format, args...), maxEventText)}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	ev.Seq = l.seq
	if len(l.ring) < l.limit {
		l.ring = append(l.ring, ev)
		return
	}
	l.ring[l.next] = ev
	l.next = (l.next + 1) % len(l.ring)
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut with
// "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	cut := n - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

// recent returns the events newest first.
func (l *eventLog) recent() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Event, 0, len(l.ring))
	for i := range l.ring {
		j := (l.next - 1 - i + 2*len(l.ring)) % len(l.ring)
		out = append(out, l.ring[j])
	}
	return out
}

// subscribe records the cluster events of one member's event stream and
// counts its activations started, with one subscription.
func (d *Dashboard) subscribe(m *member) *actor.Subscription {
	name, log := m.name, d.events
	return m.c.System().EventStream().SubscribeWithPredicate(func(e any) {
		switch ev := e.(type) {
		case *cluster.TopologyChanged:
			log.add(name, "topology", ev.At, "view %d: %d members, joined %s, left %s",
				ev.Epoch, len(ev.Members), memberIDs(ev.Joined), memberIDs(ev.Left))
		case *cluster.ClusterStatusChanged:
			log.add(name, "status", ev.At, "%s → %s", ev.From, ev.To)
		case *cluster.ActivationStarted:
			m.started.Add(1)
		case *cluster.OwnershipChanged:
			log.add(name, "handover", ev.At, "%s moves to %s", ev.Identity, ev.To)
		case *cluster.ActivationFailed:
			log.add(name, "activation-failed", ev.At, "%s: %v", ev.Identity, ev.Err)
		case *cluster.RetryThrottled:
			log.add(name, "retries-exhausted", ev.At, "%s after %d attempts: %v", ev.Identity, ev.Attempts, ev.Err)
		case *cluster.LeaseLost:
			log.add(name, "lease-lost", ev.At, "%v", ev.Err)
		case *cluster.Fenced:
			log.add(name, "fenced", ev.At, "stopped %d grains: %v", ev.Stopped, ev.Err)
		case *cluster.BlockListApplied:
			log.add(name, "blocked", ev.At, "%s blocked, %d cache entries dropped", ev.Member, ev.Invalidated)
		}
	}, func(e any) bool {
		switch e.(type) {
		case *cluster.TopologyChanged, *cluster.ClusterStatusChanged, *cluster.ActivationStarted,
			*cluster.OwnershipChanged, *cluster.ActivationFailed, *cluster.RetryThrottled,
			*cluster.LeaseLost, *cluster.Fenced, *cluster.BlockListApplied:
			return true
		}
		return false
	})
}

func memberIDs(ms []cluster.Member) string {
	if len(ms) == 0 {
		return "-"
	}
	s := ""
	for i, m := range ms {
		if i > 0 {
			s += ", "
		}
		s += m.ID
	}
	return s
}
