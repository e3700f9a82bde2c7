package main

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// tracker follows activations from the members' events: activations started
// per member, and, after a kill, which of the killed member's accounts have
// started again on another member. Safe for concurrent use.
type tracker struct {
	mu      sync.Mutex
	names   map[string]string // member key → name
	order   []string
	started map[string]int                // member name → activations started
	where   map[cluster.Identity]string   // identity → member name of its live activation
	victim  string                        // killed member's name
	orphans map[cluster.Identity]struct{} // its accounts at the kill
	moved   map[cluster.Identity]string   // of those: started again where
	killAt  time.Time
	allAt   time.Time // when the last orphan started again
}

func newTracker(ms []*member) *tracker {
	t := &tracker{names: map[string]string{}, started: map[string]int{}, where: map[cluster.Identity]string{},
		moved: map[cluster.Identity]string{}}
	for _, m := range ms {
		name := m.name
		t.names[m.c.Self().Key()] = name
		t.order = append(t.order, name)
		// Only events of this member's own activations: the others'
		// broadcasts of terminations are counted where they happened.
		actor.Subscribe(m.sys.EventStream(), func(ev *cluster.ActivationStarted) { t.onStart(name, ev.Identity) })
		actor.Subscribe(m.sys.EventStream(), func(ev *cluster.ActivationTerminated) {
			if ev.PID != nil && ev.PID.Address == m.c.Self().Address {
				t.onStop(name, ev.Identity)
			}
		})
	}
	return t
}

func (t *tracker) onStart(name string, id cluster.Identity) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.started[name]++
	t.where[id] = name
	if _, ok := t.orphans[id]; ok && name != t.victim {
		if _, done := t.moved[id]; !done {
			t.moved[id] = name
			if len(t.moved) == len(t.orphans) {
				t.allAt = time.Now()
			}
		}
	}
}

func (t *tracker) onStop(name string, id cluster.Identity) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.where[id] == name {
		delete(t.where, id)
	}
}

// markVictim records the accounts m hosts as it is killed.
func (t *tracker) markVictim(m *member) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.victim, t.killAt = m.name, time.Now()
	t.orphans = map[cluster.Identity]struct{}{}
	for id, where := range t.where {
		if where == m.name {
			t.orphans[id] = struct{}{}
		}
	}
	return len(t.orphans)
}

// progress says how many of the killed member's accounts run elsewhere.
func (t *tracker) progress() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.orphans == nil {
		return ""
	}
	return fmt.Sprintf("%s's accounts re-activated: %d/%d", t.victim, len(t.moved), len(t.orphans))
}

// reactivated describes where the killed member's accounts went.
func (t *tracker) reactivated() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.orphans == nil {
		return "no member was killed"
	}
	per := map[string]int{}
	for _, m := range t.moved {
		per[m]++
	}
	var parts []string
	for _, name := range t.order {
		if n := per[name]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", name, n))
		}
	}
	s := fmt.Sprintf("killed %s hosted %d accounts; %d re-activated elsewhere (%s)", t.victim, len(t.orphans), len(t.moved), strings.Join(parts, ", "))
	if !t.allAt.IsZero() {
		s += fmt.Sprintf(", the last %.1fs after the kill", t.allAt.Sub(t.killAt).Seconds())
	}
	return s
}

// summary lists activations started per member.
func (t *tracker) summary() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	names := append([]string(nil), t.order...)
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		s := fmt.Sprintf("%s %d", n, t.started[n])
		if n == t.victim {
			s += " (killed)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
