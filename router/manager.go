package router

import (
	"slices"

	"github.com/fraktor-go/fraktor/actor"
)

// manager is a router's actor: it owns the routee list, spawns and
// supervises a pool's routees (they are its children), watches every
// routee, and publishes a new snapshot for each change. Only its own
// invocation touches its fields.
type manager struct {
	r     *router
	props *actor.Props // a pool's routee props; nil for a group
	size  int          // a pool's wanted number of own routees
	pids  []*actor.PID // the routees, in routing order
	own   []*actor.PID // the pool's own routees (children), oldest first
}

func (m *manager) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		m.start(ctx)
	case *AddRoutee:
		if msg.PID != nil && indexOf(m.pids, msg.PID) < 0 && m.add(msg.PID) {
			ctx.Watch(msg.PID)
		}
		m.answer(ctx)
	case *RemoveRoutee:
		if m.remove(ctx, msg.PID) {
			m.publish()
		}
		m.answer(ctx)
	case *Resize:
		if m.props != nil && msg.Size >= 0 {
			m.size = msg.Size
			if m.resize(ctx) {
				m.publish()
			}
		}
		m.answer(ctx)
	case *GetRoutees:
		m.answer(ctx)
	case *actor.Terminated:
		if i := indexOf(m.pids, msg.Who); i >= 0 {
			m.pids = slices.Delete(m.pids, i, i+1)
			if j := indexOf(m.own, msg.Who); j >= 0 {
				m.own = slices.Delete(m.own, j, j+1)
			}
			m.publish()
		}
	case *actor.Stopped:
		m.r.close()
	}
}

// start (re)builds the routees: a pool spawns its own (after a restart of
// this actor the old ones are gone: a restart stops children), a group
// watches the ones it has.
func (m *manager) start(ctx actor.Context) {
	if m.props != nil {
		for _, p := range m.own {
			if i := indexOf(m.pids, p); i >= 0 {
				m.pids = slices.Delete(m.pids, i, i+1)
			}
		}
		m.own = nil
		m.resize(ctx)
	}
	for _, p := range m.pids {
		ctx.Watch(p)
	}
	m.publish()
}

// resize spawns or removes own routees until there are size of them, or
// fewer when a spawn is refused.
func (m *manager) resize(ctx actor.Context) bool {
	changed := false
	for len(m.own) < m.size {
		pid := ctx.Spawn(m.props)
		if pid == nil {
			// Refused (a SpawnMiddleware, the system shutting down): no
			// routee, rather than a nil one, which made the routee set
			// route to nil or fail the router's actor
			// (TestPoolRefusedRouteeSpawnsAreNoRoutees). The next spawns
			// would be refused as well; a later Resize tries again.
			break
		}
		m.own = append(m.own, pid)
		m.pids = append(m.pids, pid)
		ctx.Watch(pid)
		changed = true
	}
	for len(m.own) > m.size {
		m.remove(ctx, m.own[len(m.own)-1])
		changed = true
	}
	return changed
}

// remove takes pid out of the routees; an own routee is poisoned, so it
// handles what was routed to it before it stops.
func (m *manager) remove(ctx actor.Context, pid *actor.PID) bool {
	i := indexOf(m.pids, pid)
	if i < 0 {
		return false
	}
	pid = m.pids[i]
	m.pids = slices.Delete(m.pids, i, i+1)
	ctx.Unwatch(pid)
	if j := indexOf(m.own, pid); j >= 0 {
		m.own = slices.Delete(m.own, j, j+1)
		ctx.Poison(pid)
	}
	return true
}

func (m *manager) publish() { m.r.publish(newRouteeSet(slices.Clone(m.pids))) }

// add makes pid a routee and publishes the routees, unless routing to pid
// leads back to this router (pid is the router itself, or a router on this
// system whose routees lead here): routing to it would recurse on the
// sender's goroutine until the stack overflows (see graph). The check and
// the publishing happen under graph.mu. Before the router has its PID
// (self nil) there is nothing to check against: spawn checks the routees
// published by then as it registers the router.
func (m *manager) add(pid *actor.PID) bool {
	graph.mu.Lock()
	defer graph.mu.Unlock()
	if self := m.r.self.Load(); self != nil && (self.Equal(pid) || closesCycle(m.r.sys, self.ID, []*actor.PID{pid})) {
		m.r.sys.Logger().Warn("router: AddRoutee ignored: routing to it would lead back to this router", "router", self, "routee", pid)
		return false
	}
	m.pids = append(m.pids, pid)
	m.publish()
	return true
}

func (m *manager) answer(ctx actor.Context) {
	if ctx.Sender() != nil {
		ctx.Respond(&Routees{PIDs: slices.Clone(m.pids)})
	}
}
