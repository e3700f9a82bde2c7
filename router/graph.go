package router

import (
	"sync"

	"github.com/fraktor-go/fraktor/actor"
)

// graph knows every live router of every system in the process, so that no
// change of routees closes a cycle of local routers. A router routes on the
// sender's goroutine, straight into its routee's process: when that routee
// is a router whose routees lead back, the sender's goroutine recurses
// until its stack overflows, a fatal error no recover stops
// (TestRoutersRoutingToEachOtherDoNotCrash). Routing never looks here: a
// router is checked when it is registered (SpawnGroup's routees) and when
// a routee is added (AddRoutee); both take mu, so two changes cannot each
// close half of a cycle. Only a group's routees can be routers (a pool's
// are the actors it spawns). Routers on other nodes are not followed: a
// cycle across nodes costs a network hop per turn, not the stack.
var graph struct {
	mu   sync.Mutex
	live map[routerKey]*router
}

type routerKey struct {
	sys *actor.System
	id  string
}

// localRouter returns the live router pid names on sys, or nil. Under
// graph.mu.
func localRouter(sys *actor.System, pid *actor.PID) *router {
	if pid == nil || (pid.Address != sys.Address() && pid.Address != actor.LocalAddress) {
		return nil
	}
	return graph.live[routerKey{sys, pid.ID}]
}

// reaches reports whether routing to pid leads to the process id on sys:
// pid is it, or a live router one of whose routees reaches it. Under
// graph.mu; seen keeps a router's routees from being walked twice.
func reaches(sys *actor.System, pid *actor.PID, id string, seen map[*router]bool) bool {
	if pid == nil {
		return false
	}
	if pid.ID == id && (pid.Address == sys.Address() || pid.Address == actor.LocalAddress) {
		return true
	}
	r := localRouter(sys, pid)
	if r == nil || seen[r] {
		return false
	}
	seen[r] = true
	set := r.routees.Load()
	if set == nil {
		return false
	}
	for _, p := range set.pids {
		if reaches(sys, p, id, seen) {
			return true
		}
	}
	return false
}

// closesCycle reports whether a router with ID id on sys routing to one of
// routees would reach itself. Under graph.mu.
func closesCycle(sys *actor.System, id string, routees []*actor.PID) bool {
	seen := map[*router]bool{}
	for _, p := range routees {
		if reaches(sys, p, id, seen) {
			return true
		}
	}
	return false
}

// register records r, registered as id. Under graph.mu.
func (r *router) register(id string) {
	if graph.live == nil {
		graph.live = map[routerKey]*router{}
	}
	graph.live[routerKey{r.sys, id}] = r
}

// unregister forgets r, registered as id.
func (r *router) unregister(id string) {
	graph.mu.Lock()
	defer graph.mu.Unlock()
	if k := (routerKey{r.sys, id}); graph.live[k] == r {
		delete(graph.live, k)
	}
}
