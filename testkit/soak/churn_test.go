package soak_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// round runs one round of churn. Member 0 is one system for the whole
// run: every third round, from the second on, it is cut off the registry
// until it fences itself and rejoins as a new incarnation. Members 1 and 2
// take turns to leave and come back (under a new member ID every fourth
// round; killed rather than shut down every eighth, from the sixth on).
// Then every member calls grains (most of them new identities) while one
// member's connections are reset, and plain actors are spawned, watched
// across members, asked, stopped and sent to after their stop.
func (h *harness) round(r, ids int) {
	h.t.Helper()
	if r%3 == 1 {
		h.fence(0)
	}
	h.replace(1+r%2, r%4 == 3, r%8 == 5)

	var wg sync.WaitGroup
	half := make(chan struct{})
	for j, m := range h.members {
		wg.Go(func() {
			h.grainTraffic(r, j, m, ids/len(h.members), half)
		})
	}
	wg.Go(func() {
		<-half
		n := h.members[(r+1)%3].tr.reset()
		h.mu.Lock()
		h.stats.resets += n
		h.mu.Unlock()
	})
	wg.Wait()
	h.plainActors(r)
}

// grainTraffic is member j's calls in round r: n identities, each used
// once in one of five ways (request, Send then passivate, a request the
// grain never answers, an abandoned future, or a request to one of eight
// hot identities used every round). Member 0 closes half when half-way.
func (h *harness) grainTraffic(r, j int, m *member, n int, half chan struct{}) {
	var local churnStats
	var firstErr error
	for k := range n {
		if j == 0 && k == n/2 {
			close(half)
		}
		id := cluster.NewIdentity("item", fmt.Sprintf("r%d-m%d-%d", r, j, k))
		switch k % 10 {
		case 0:
			id = cluster.NewIdentity("item", fmt.Sprintf("hot-%d", k%8))
		case 3:
			m.c.Send(id, &ping{N: 1})
			m.c.Send(id, &bye{})
			local.sends += 2
			continue
		case 5:
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
			_, err := cluster.Request[*pong](ctx, m.c, id, &hang{})
			cancel()
			if err != nil {
				local.timeouts++
			}
			continue
		case 7:
			h.abandon(m.c.RequestFuture(id, &ping{N: 1}, 300*time.Millisecond))
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := cluster.Request[*pong](ctx, m.c, id, &ping{N: 1})
		cancel()
		local.requests++
		if err != nil {
			local.requestFailures++
			if firstErr == nil {
				firstErr = fmt.Errorf("%s from %s: %w", id, m.id, err)
			}
		}
	}
	if j == 0 && n == 0 {
		close(half)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stats.requests += local.requests
	h.stats.requestFailures += local.requestFailures
	h.stats.sends += local.sends
	h.stats.timeouts += local.timeouts
	if firstErr != nil {
		h.t.Errorf("soak: round %d: %v", r, firstErr)
	}
}

// plainActors spawns echo actors on every member, has a watcher on each
// member watch those of its own member and of the next, asks across
// members (answered, timed out, abandoned), stops the echoes, waits for
// every Terminated, and sends to the stopped ones from both sides (dead
// letters).
func (h *harness) plainActors(r int) {
	h.t.Helper()
	const perMember = 8
	n := len(h.members)
	echoes := make([][]*actor.PID, n)
	for j, m := range h.members {
		for range perMember {
			echoes[j] = append(echoes[j], m.sys.Root().Spawn(echoProps))
		}
	}
	var gone sync.WaitGroup
	var terminated atomic.Int64
	watchers := make([]*actor.PID, n)
	for j, m := range h.members {
		gone.Add(2 * perMember)
		watchers[j] = m.sys.Root().Spawn(watcherProps(func() { terminated.Add(1); gone.Done() }))
		next := h.members[(j+1)%n]
		pids := append([]*actor.PID(nil), echoes[j]...)
		for _, p := range echoes[(j+1)%n] {
			pids = append(pids, actor.NewPID(next.sys.Address(), p.ID))
		}
		if _, err := m.sys.Root().RequestFuture(watchers[j], &watchThem{pids: pids}, 10*time.Second).Result(); err != nil {
			h.t.Fatalf("soak: round %d: watcher on %s: %v", r, m.id, err)
		}
	}
	for j, m := range h.members {
		next, after := h.members[(j+1)%n], h.members[(j+2)%n]
		p := echoes[(j+1)%n][r%perMember]
		if _, err := m.sys.Root().RequestFuture(actor.NewPID(next.sys.Address(), p.ID), &ping{N: r}, 10*time.Second).Result(); err != nil {
			h.t.Errorf("soak: round %d: remote echo from %s: %v", r, m.id, err)
		}
		sink := actor.NewPID(after.sys.Address(), after.sink.ID)
		if _, err := m.sys.Root().RequestFuture(sink, &hang{}, 20*time.Millisecond).Result(); err == nil {
			h.t.Errorf("soak: round %d: the sink answered", r)
		}
		h.abandon(m.sys.Root().RequestFuture(sink, &hang{}, 200*time.Millisecond))
	}
	for j, m := range h.members {
		for _, p := range echoes[j] {
			m.sys.Root().Stop(p)
		}
	}
	done := make(chan struct{})
	go func() { gone.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		h.t.Fatalf("soak: round %d: %d of %d Terminated came", r, terminated.Load(), 2*perMember*n)
	}
	var dead int
	for j, m := range h.members {
		prev := h.members[(j+n-1)%n]
		for _, p := range echoes[j] {
			m.sys.Root().Send(p, &ping{N: 1})
			prev.sys.Root().Send(actor.NewPID(m.sys.Address(), p.ID), &ping{N: 1})
			dead += 2
		}
	}
	for j, m := range h.members {
		if err := m.sys.Root().StopFuture(watchers[j]).Wait(); err != nil {
			h.t.Errorf("soak: round %d: stop watcher: %v", r, err)
		}
	}
	h.mu.Lock()
	h.stats.spawned += perMember * n
	h.stats.terminated += int(terminated.Load())
	h.stats.deadLettersSent += dead
	h.stats.timeouts += n
	h.mu.Unlock()
}
