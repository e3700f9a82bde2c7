package actor

import "github.com/fraktor-go/fraktor/internal/watchhook"

// Watch updates (internal/watchhook) are how the remote extension hands an
// actor a peer's watch requests for one (watcher, watchee) pair: one
// queued system message per pair at most, whose state the extension keeps
// and the actor reads when it handles it. A peer that alternates
// WatchRequest and UnwatchRequest for one watcher to an actor stuck in its
// Receive queued a message per request before; now the extension queues
// an update only when none is queued, and later requests change only the
// state the queued one will read. Not a public API: Take runs under the
// extension's lock on the actor's turn.

// watchUpdate asks the receiver to add or remove watcher, by what
// state.Take reports when it is handled.
type watchUpdate struct {
	watcher *PID
	state   watchhook.State
}

func (*watchUpdate) systemMessage() {}

func init() {
	watchhook.Install(watchhook.Funcs{
		Post: func(p, pid, watcher any, s watchhook.State) {
			postWatchUpdate(p.(Process), pid.(*PID), watcher.(*PID), s)
		},
		SystemLen: func(pid any) int {
			if c := pid.(*PID).local.Load(); c != nil {
				return c.mb.SystemLen()
			}
			return -1
		},
	})
}

// postWatchUpdate hands p an update of watcher's watch (watchhook.Post).
// A local actor queues it; any other process takes it at once, as the
// Watch or Unwatch the state stands for (a custom process knows only
// those).
func postWatchUpdate(p Process, pid, watcher *PID, s watchhook.State) {
	if c, ok := p.(*cell); ok {
		c.mb.PostSystem(nil, envelope{msg: &watchUpdate{watcher: watcher, state: s}})
		return
	}
	if s.Take() {
		p.SendSystem(pid, &Watch{Watcher: watcher})
		return
	}
	p.SendSystem(pid, &Unwatch{Watcher: watcher})
}

// applyWatchUpdate handles m on c's turn: the watcher is added or removed
// as its latest state says (both idempotent).
func (c *cell) applyWatchUpdate(m *watchUpdate) {
	if m.state.Take() {
		c.addWatcher(m.watcher)
		return
	}
	if x := c.x; x != nil {
		x.watchers.remove(m.watcher)
	}
}
