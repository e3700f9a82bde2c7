package remote

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/fraktor-go/fraktor/actor"
)

// spawnerID is the process ID that remote spawn requests and responses are
// addressed to. It is not a registered process: the extension handles them
// itself.
const spawnerID = "$remote-spawner"

// Spawn failure codes carried in SpawnResponse.Err as "code: detail".
const (
	spawnErrUnknownKind = "unknown-kind"
	spawnErrNameExists  = "name-exists"
	spawnErrFailed      = "failed"
	spawnErrTooMany     = "too-many" // Config.MaxSpawnsPerPeer; a node that predates it reads it as failed
)

// SpawnNamed asks the node at address to spawn a top-level actor of kind (one
// of that node's Config.Kinds) named name ("" lets that node pick one) and
// returns its PID. It blocks until the node answers or ctx ends.
//
// Errors: ErrUnknownKind (the node does not offer kind); actor.ErrNameExists
// (the name is taken there); ErrTooManySpawns (the actors this node spawned
// there and that live reached that node's Config.MaxSpawnsPerPeer); ErrPeerUnreachable (the node could not be
// reached within Config.GiveUpAfter, or went away before answering), or
// ErrBlocked, ErrStopped, ErrPeerShutdown, ErrPeerRestarted; actor.ErrTimeout
// wrapping ctx's error when ctx ends first; ErrSpawnFailed for anything else
// the node reports. The address of this node spawns locally.
func (r *Remote) SpawnNamed(ctx context.Context, address, name, kind string) (*actor.PID, error) {
	if kind == "" || len(kind) > maxSysStringLen || len(name) > maxSysStringLen {
		return nil, fmt.Errorf("%w: kind must be 1..%d bytes and name at most %d", ErrSpawnFailed, maxSysStringLen, maxSysStringLen)
	}
	if r.isLocal(address) {
		return r.spawnKind(name, kind)
	}
	id, ch, err := r.spawns.add(address)
	if err != nil {
		return nil, err
	}
	defer r.spawns.remove(id)
	r.sendEnv(Envelope{
		Target:  PIDRef{Address: address, ID: spawnerID},
		Sender:  PIDRef{Address: r.Address(), ID: spawnerID},
		Message: &SpawnRequest{Name: name, Kind: kind, RequestID: id},
	}, sendLocal)
	select {
	case res := <-ch:
		if res.err != nil {
			return nil, fmt.Errorf("remote: spawn of %q on %s: %w", kind, address, res.err)
		}
		return res.pid, nil
	case <-ctx.Done():
		if res, ok := r.spawns.abandon(id); ok && res.err == nil {
			// The answer came as ctx ended: the actor is there, and the
			// caller gets it rather than a timeout and an orphan.
			return res.pid, nil
		}
		return nil, fmt.Errorf("remote: spawn of %q on %s: %w: %w", kind, address, actor.ErrTimeout, ctx.Err())
	}
}

// stopOrphan stops an actor a peer spawned for a request whose caller had
// given up (its ctx ended, or the peer restarted and the request went to
// the new incarnation): nobody knows its PID, so it would live on unused.
func (r *Remote) stopOrphan(pid PIDRef) {
	r.log.Debug("remote: stopping an actor spawned for a request that was given up", "pid", pid.String())
	r.sendEnv(Envelope{Target: pid, Message: &StopRequest{}}, sendLocal)
}

// spawnKind spawns a top-level actor of a local kind.
func (r *Remote) spawnKind(name, kind string) (*actor.PID, error) {
	props := r.kinds[kind]
	if props == nil {
		return nil, fmt.Errorf("%w: %q is not offered by %s", ErrUnknownKind, kind, r.Address())
	}
	if name != "" {
		return r.sys.Root().SpawnNamed(props, name)
	}
	// SpawnNamed with no name generates the ID, as Spawn does, and
	// returns why a spawn failed (Shutdown may begin after any check made
	// here), where Spawn returns only a nil PID.
	return r.sys.Root().SpawnNamed(props, "")
}

// handleSpawnRequest answers a peer's SpawnRequest (on the reader
// goroutine: spawning does not block). The actors that the peer at
// from.Address (the connection's, not a sender the envelope names) has
// spawned here and that live are at most Config.MaxSpawnsPerPeer; a
// request beyond it spawns nothing and is answered with the too-many code
// (ErrTooManySpawns at the spawner).
func (r *Remote) handleSpawnRequest(from Peer, env Envelope, m *SpawnRequest) {
	resp := &SpawnResponse{RequestID: m.RequestID}
	var pid *actor.PID
	var err error
	if r.spawned.reserve(from.Address) {
		if pid, err = r.spawnKind(m.Name, m.Kind); err == nil {
			r.spawned.track(r.sys.System(), pid, from.Address)
		} else {
			r.spawned.release(from.Address)
		}
	} else {
		err = fmt.Errorf("%w: %s has %d live actors spawned here (Config.MaxSpawnsPerPeer)", ErrTooManySpawns, from.Address, r.spawned.max)
		r.node.stats.spawnsRefused.Add(1)
		if ok, held := r.spawnLog.allow(r.sys.Clock().Now()); ok {
			r.log.Warn("remote: a peer's spawns reached Config.MaxSpawnsPerPeer; refused until some of its actors stop",
				"peer", from.String(), "max", r.spawned.max, "kind", m.Kind, "suppressed", held)
		}
	}
	switch {
	case err == nil:
		resp.PID = r.ref(pid)
	case errors.Is(err, ErrTooManySpawns):
		resp.Err = spawnErrTooMany + ": " + err.Error()
	case errors.Is(err, ErrUnknownKind):
		resp.Err = spawnErrUnknownKind + ": " + err.Error()
	case errors.Is(err, actor.ErrNameExists):
		resp.Err = spawnErrNameExists + ": " + err.Error()
	default:
		resp.Err = spawnErrFailed + ": " + err.Error()
	}
	if len(resp.Err) > maxSysStringLen {
		resp.Err = resp.Err[:maxSysStringLen]
	}
	r.log.Debug("remote: spawn request", "kind", m.Kind, "name", m.Name, "from", env.Sender.Address, "pid", resp.PID.String(), "err", resp.Err)
	if env.Sender.IsZero() {
		return
	}
	r.sendEnv(Envelope{Target: env.Sender, Message: resp}, sendReply) // the requester named that address
}

// spawnError turns SpawnResponse.Err back into a typed error. The peer's
// text is kept for the message but never trusted for anything else.
func spawnError(s string) error {
	code, detail, _ := strings.Cut(s, ": ")
	switch code {
	case spawnErrUnknownKind:
		return fmt.Errorf("%w (peer said: %s)", ErrUnknownKind, detail)
	case spawnErrNameExists:
		return fmt.Errorf("%w (peer said: %s)", actor.ErrNameExists, detail)
	case spawnErrTooMany:
		return fmt.Errorf("%w (peer said: %s)", ErrTooManySpawns, detail)
	default:
		return fmt.Errorf("%w (peer said: %s)", ErrSpawnFailed, s)
	}
}

type spawnResult struct {
	pid *actor.PID
	err error
}

type pendingSpawn struct {
	addr string
	ch   chan spawnResult // capacity 1: the first result wins
}

// spawnTable holds the remote spawns waiting for an answer, by request ID.
type spawnTable struct {
	mu      sync.Mutex
	seq     uint64
	closed  error
	pending map[uint64]*pendingSpawn
}

// init starts the request IDs at a random 45-bit base. A node restarted at
// the same address would otherwise number its spawn requests as its earlier
// incarnation did, and a peer's answer to one of those, queued there while
// this node was down, would complete the new incarnation's request of the
// same number with another request's actor
// (TestSpawnAnswerToEarlierIncarnationRefused). The actor system's futures
// start at a random base for the same reason; two incarnations' IDs meet
// only when their bases fall within the count of spawns either made.
func (t *spawnTable) init() {
	t.pending = map[uint64]*pendingSpawn{}
	t.seq = rand.Uint64() >> 19
}

func (t *spawnTable) add(addr string) (uint64, <-chan spawnResult, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed != nil {
		return 0, nil, t.closed
	}
	t.seq++
	p := &pendingSpawn{addr: addr, ch: make(chan spawnResult, 1)}
	t.pending[t.seq] = p
	return t.seq, p.ch, nil
}

func (t *spawnTable) remove(id uint64) {
	t.mu.Lock()
	delete(t.pending, id)
	t.mu.Unlock()
}

func (p *pendingSpawn) resolve(res spawnResult) {
	select {
	case p.ch <- res:
	default:
	}
}

// complete delivers a peer's answer. Answers from another node than the
// one asked are dropped. An answer to an unknown request ID (it came after
// the caller gave up) that names an actor the answering peer spawned has
// that actor stopped (stopOrphan); the PID must be at the peer's own
// address, so that a peer cannot have a process elsewhere stopped.
func (t *spawnTable) complete(r *Remote, from Peer, m *SpawnResponse) {
	var res spawnResult
	switch {
	case m.Err != "":
		res.err = spawnError(m.Err)
	case m.PID.IsZero():
		res.err = fmt.Errorf("%w: the peer answered without a PID", ErrSpawnFailed)
	default:
		res.pid = r.pid(m.PID)
	}
	t.mu.Lock()
	p := t.pending[m.RequestID]
	if p != nil && p.addr == from.Address {
		p.resolve(res) // under mu: abandon either finds it or comes first
		t.mu.Unlock()
		return
	}
	t.mu.Unlock()
	r.log.Debug("remote: spawn response without a request", "request", m.RequestID, "peer", from.String())
	if p == nil && res.err == nil && m.PID.Address == from.Address {
		r.stopOrphan(m.PID)
	}
}

// abandon forgets request id, whose caller gives up, and returns its
// answer if one came meanwhile. Under mu, as complete resolves: an answer
// is either taken here or finds no request there (and its actor is
// stopped).
func (t *spawnTable) abandon(id uint64) (spawnResult, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.pending[id]
	delete(t.pending, id)
	if p == nil {
		return spawnResult{}, false
	}
	select {
	case res := <-p.ch:
		return res, true
	default:
		return spawnResult{}, false
	}
}

// fail fails spawn id with err. Like failAddress and failAll, it forgets
// the request as it fails it: an answer that still comes (the peer spawned
// the actor) then finds no request and has its actor stopped (complete),
// instead of finding one it can no longer complete and being dropped
// before the caller woke and forgot it
// (TestRemoteSpawnAnswerAfterFailureStopsTheActor).
func (t *spawnTable) fail(id uint64, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := t.pending[id]; p != nil {
		delete(t.pending, id)
		p.resolve(spawnResult{err: err})
	}
}

// failAddress fails every spawn waiting on addr and returns how many.
func (t *spawnTable) failAddress(addr string, err error) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for id, p := range t.pending {
		if p.addr == addr {
			delete(t.pending, id)
			p.resolve(spawnResult{err: err})
			n++
		}
	}
	return n
}

// failAll fails every waiting spawn and refuses new ones with err.
func (t *spawnTable) failAll(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = err
	for id, p := range t.pending {
		delete(t.pending, id)
		p.resolve(spawnResult{err: err})
	}
}
