package actor

import (
	"strconv"
	"strings"
)

// An actor's ID stays short whatever its depth: a top-level actor's ID is
// its name, and a deeper actor's ID is "#<parent's mailbox index>/<name>"
// (the index is unique within the system, so the name needs to be unique
// only among siblings). Its path, the names from its top-level ancestor down
// to it, is computed on demand by walking the parents.

// childPrefix appends the ID prefix of parent's children to b.
func childPrefix(b []byte, parent *cell) []byte {
	return append(strconv.AppendUint(append(b, '#'), uint64(parent.idx), 36), '/')
}

// isGuardian reports whether c is one of the system's guardians.
func (s *System) isGuardian(c *cell) bool {
	return c == s.userGuardian || c == s.systemGuardian || c == s.rootGuardian
}

// name returns the name c was spawned with (generated or given).
func (s *System) nameOf(c *cell) string {
	id := c.selfPID().ID
	if p := c.parent.local.Load(); p != nil && !s.isGuardian(p) {
		return id[strings.IndexByte(id, '/')+1:]
	}
	return id
}

// liveCell returns the live local actor of pid, or nil.
func (s *System) liveCell(pid *PID) *cell {
	if pid == nil || (pid.Address != s.Address() && pid.Address != LocalAddress) {
		return nil
	}
	c := pid.local.Load()
	if c == nil {
		p, ok := s.registry.get(pid.ID)
		if !ok {
			return nil
		}
		if c, ok = p.(*cell); !ok {
			return nil
		}
	}
	if c.parent == nil || c.mb.Closed() || c.sys != s {
		return nil
	}
	return c
}

// PathOf returns the path of the local actor of pid: the names from its
// top-level ancestor down to it, joined by "/", as LookupPath takes it. In
// each name "%" is written "%25" and "/" "%2F" (a grain's name, "kind/id",
// has one), so a path names one actor.
// It walks the parents, so it costs time in the actor's depth. It reports
// false when pid is not a live local actor, or is a guardian.
func (s *System) PathOf(pid *PID) (string, bool) {
	c := s.liveCell(pid)
	if c == nil || s.isGuardian(c) {
		return "", false
	}
	var names []string
	n := 0
	for c != nil && !s.isGuardian(c) {
		name := pathEscaper.Replace(s.nameOf(c))
		names = append(names, name)
		n += len(name) + 1
		c = c.parent.local.Load()
	}
	var b strings.Builder
	b.Grow(n)
	for i := len(names) - 1; i >= 0; i-- {
		b.WriteString(names[i])
		if i > 0 {
			b.WriteByte('/')
		}
	}
	return b.String(), true
}

// LookupPath returns the PID of the live local actor at path, as PathOf
// gives it ("orders/worker$3/retry"; a name with "/" or "%" escaped as
// PathOf does: "counter%2F7" is the top-level actor "counter/7").
func (s *System) LookupPath(path string) (*PID, bool) {
	top, rest, more := strings.Cut(path, "/")
	c := s.liveCell(&PID{Address: LocalAddress, ID: pathUnescaper.Replace(top)})
	if c == nil || s.isGuardian(c) || !s.isGuardian(c.parent.local.Load()) {
		return nil, false
	}
	var buf [64]byte
	for more {
		var name string
		name, rest, more = strings.Cut(rest, "/")
		id := append(childPrefix(buf[:0], c), pathUnescaper.Replace(name)...)
		if c = s.liveCell(&PID{Address: LocalAddress, ID: string(id)}); c == nil {
			return nil, false
		}
	}
	return c.selfPID(), true
}

// pathEscaper and pathUnescaper write and read a name in a path: "%" and
// "/" escaped, so that a name with "/" is not taken for a parent and its
// child (TestNewuser8LookupPathOfPathOfIsAnotherActor: LookupPath of the
// path of a top-level "lobby/room" found the child "room" of "lobby").
var (
	pathEscaper   = strings.NewReplacer("%", "%25", "/", "%2F")
	pathUnescaper = strings.NewReplacer("%2F", "/", "%2f", "/", "%25", "%")
)
