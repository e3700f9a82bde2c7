package actor

import (
	"fmt"
	"runtime/debug"

	"github.com/fraktor-go/fraktor/scheduler"
)

// SpawnInfo describes a spawn: the parent (the user guardian for spawns
// from the RootContext), the name given to SpawnNamed ("" otherwise) and
// the prefix given to SpawnPrefix.
type SpawnInfo struct {
	Parent *PID
	Name   string
	Prefix string
}

// SpawnFunc spawns an actor from props as described by info.
type SpawnFunc func(info SpawnInfo, props *Props) (*PID, error)

// SpawnMiddleware wraps spawns, beside receive, send and invoke middleware:
// it may observe them (the PID, the error), decorate the Props (with
// Props.With) or refuse a spawn by returning an error without calling
// next. The parent cannot be changed: next spawns under info.Parent's
// actor whatever info it is handed.
//
// It runs on the spawning goroutine: inside the parent's Receive for
// Context spawns (a panic there is the parent's failure), on the caller's
// goroutine for RootContext spawns (a panic there is returned as an error
// wrapping *PanicError and nothing is spawned: an actor that next spawned
// before the panic is stopped), so it must be safe for
// concurrent use when it is shared.
//
// The chain runs before the name is checked, since a middleware may change
// info.Name: for a spawn under a taken name it runs as for any other, and
// next returns ErrNameExists (which it sees) without having run the Props'
// producer. A middleware with side effects for the actor it spawns makes
// them after next succeeds.
type SpawnMiddleware func(next SpawnFunc) SpawnFunc

// WithSpawnMiddleware wraps every spawn made by actors with these Props and
// by their descendants (children inherit the chain of their parent, and
// add their own Props' middleware inside it); the first middleware is the
// outermost. SystemConfig.SpawnMiddleware wraps all of them, outermost.
func WithSpawnMiddleware(mw ...SpawnMiddleware) PropsOption {
	return propsOption(func(p *Props) { p.opts().spawnMW = append(p.opts().spawnMW, mw...) })
}

// inheritSpawnMW gives the new cell c its spawn chain: its parent's, then
// its own Props' middleware. Nothing is stored when both are empty.
func (c *cell) inheritSpawnMW(parent *cell) {
	var inherited []SpawnMiddleware
	if parent != nil && parent.mw != nil {
		inherited = parent.mw.spawn
	}
	own := c.props.o().spawnMW
	if len(inherited) == 0 && len(own) == 0 {
		return
	}
	if c.mw == nil {
		c.mw = &chains{}
	}
	if len(own) == 0 {
		c.mw.spawn = inherited // shared, read-only
		return
	}
	list := make([]SpawnMiddleware, 0, len(inherited)+len(own))
	c.mw.spawn = append(append(list, inherited...), own...)
}

// spawnChild spawns a child of c through c's spawn chain; w is the
// spawning worker (nil from outside). made, when not nil, is set to each
// actor the chain spawns.
func (c *cell) spawnChild(w *scheduler.Worker, props *Props, name, prefix string, made **PID) (*PID, error) {
	if c.mw == nil || len(c.mw.spawn) == 0 {
		return c.sys.spawn(c, w, props, name, prefix)
	}
	var next SpawnFunc = func(info SpawnInfo, p *Props) (*PID, error) {
		pid, err := c.sys.spawn(c, w, p, info.Name, info.Prefix)
		if made != nil && err == nil {
			*made = pid
		}
		return pid, err
	}
	list := c.mw.spawn
	for i := len(list) - 1; i >= 0; i-- {
		next = list[i](next)
	}
	return next(SpawnInfo{Parent: c.selfPID(), Name: name, Prefix: prefix}, props)
}

// spawnFromRoot is spawnChild for the RootContext: a panic in a middleware
// is returned as an error.
func (s *System) spawnFromRoot(props *Props, name, prefix string) (pid *PID, err error) {
	g := s.userGuardian
	if g.mw == nil || len(g.mw.spawn) == 0 {
		return s.spawn(g, nil, props, name, prefix)
	}
	var made *PID
	defer func() {
		if r := recover(); r != nil {
			pid, err = nil, fmt.Errorf("actor: spawn middleware: %w", &PanicError{Value: r, Stack: debug.Stack()})
			if made != nil {
				// A middleware that panicked after next had spawned: the
				// caller gets no PID, so nothing may stay spawned
				// (TestSpawnMiddlewarePanicAfterNextStopsTheActor).
				s.sendSystem(nil, made, stopSys)
			}
		}
	}()
	return g.spawnChild(nil, props, name, prefix, &made)
}
