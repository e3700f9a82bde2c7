package actor

import "sync/atomic"

// LocalAddress is the address of PIDs in a system without a remote
// transport. With remote installed, local PIDs carry the advertised address.
const LocalAddress = "local"

// PID identifies a process (an actor, a future, a remote proxy). A PID is a
// small immutable value shared by pointer; after the first send it caches the
// process it resolved to, so later sends skip the registry. The cache
// belongs to the PID, not to a system: a PID value shared between two
// systems of one process sends, from both, through the process the first
// send resolved (a remote PID: the first system's connection). Give each
// system its own PID value (NewPID) when that matters.
//
// Two PIDs are the same process when Address and ID are equal (see Equal).
type PID struct {
	Address string
	ID      string

	local atomic.Pointer[cell]    // set when the PID resolves to a local actor
	proc  atomic.Pointer[procRef] // set when it resolves to any other process
}

type procRef struct{ p Process }

// NewPID returns a PID for address and id. It resolves lazily.
func NewPID(address, id string) *PID { return &PID{Address: address, ID: id} }

// NewBoundPID returns a PID for address and id that resolves to p, without
// asking the registry or the remote resolver: for a transport whose PIDs of
// one origin go through a process of their own (remote: the senders and
// watchers a peer names, whose dials are budgeted). p must stand for the
// process at address/id.
func NewBoundPID(address, id string, p Process) *PID {
	pid := &PID{Address: address, ID: id}
	pid.cache(p)
	return pid
}

// String returns "address/id".
func (p *PID) String() string {
	if p == nil {
		return "<nil>"
	}
	return p.Address + "/" + p.ID
}

// Equal reports whether p and o name the same process.
func (p *PID) Equal(o *PID) bool {
	if p == nil || o == nil {
		return p == o
	}
	return p.ID == o.ID && p.Address == o.Address
}

// Key returns a string that identifies the process, for use as a map key.
func (p *PID) Key() string { return p.Address + "/" + p.ID }

func (p *PID) cached() Process {
	if c := p.local.Load(); c != nil {
		return c
	}
	if r := p.proc.Load(); r != nil {
		return r.p
	}
	return nil
}

func (p *PID) cache(proc Process) {
	if c, ok := proc.(*cell); ok {
		p.local.Store(c)
		return
	}
	p.proc.Store(&procRef{p: proc})
}

// cacheRef caches a procRef owned by the process itself (no allocation).
func (p *PID) cacheRef(r *procRef) { p.proc.Store(r) }
