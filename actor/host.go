package actor

import (
	"fmt"
	"log/slog"

	"go.opentelemetry.io/otel/metric"

	"github.com/fraktor-go/fraktor/scheduler"
)

// Host is what an extension installer is given (ExtensionInstaller.Install):
// the system's services and the hooks through which an extension plugs into
// the runtime (a transport, placement). Users of a system never need it;
// the System's own API is what they call.
//
// A Host stays valid for the life of its system and is safe for concurrent
// use; its methods never block.
type Host interface {
	// System returns the actor system itself (its user API).
	System() *System
	// Name is the system's name; Address the Address of its local PIDs
	// (LocalAddress until a transport sets one).
	Name() string
	Address() string
	// Logger, Clock, MeterProvider, EventStream and Root are the system's
	// (MeterProvider is a no-op provider when none was configured).
	Logger() *slog.Logger
	Clock() scheduler.Clock
	MeterProvider() metric.MeterProvider
	EventStream() *EventStream
	Root() *RootContext

	// SpawnSystem starts a system actor: a child of the system guardian,
	// stopped after every user actor at Shutdown. name "" generates one.
	SpawnSystem(props *Props, name string) (*PID, error)

	// SetAddress changes the Address of PIDs created from now on; a
	// transport calls it while it is installed, before any user actor
	// exists.
	SetAddress(addr string)
	// SetRemoteHandler installs the resolver of PIDs of other addresses and
	// makes futures reachable by ID (answers from the wire look them up);
	// nil removes the resolver.
	SetRemoteHandler(h RemoteHandler)
	// SetTimeoutCause installs what a request to another address that
	// timed out asks why: fn returns why this node has no connection to
	// address (the last failed dial or refused handshake), or nil when
	// nothing is known. The timeout's error then wraps it beside
	// ErrTimeout, so the caller reads the cause instead of a bare
	// timeout. fn runs on the goroutine that times the request out (the
	// timer queue, the caller): it must be cheap and must not block. nil
	// removes it.
	SetTimeoutCause(fn func(address string) error)
	// Lookup returns the local process registered under id. A custom
	// process (RegisterProcess) comes wrapped, so that a panic in its
	// SendUser or SendSystem is a dead letter whose reason wraps the
	// *PanicError, as when the runtime delivers to it.
	Lookup(id string) (Process, bool)
	// ProcessStopped reports whether p is a local process that takes no
	// more messages: an actor that has stopped (or is stopping for good),
	// a future that has completed, or a custom process (as Lookup handed
	// it out) whose ID no longer names it (UnregisterProcess); other
	// processes report false. A cache of processes looked up by ID uses it
	// to notice that an ID it resolved is gone and to look the ID up again.
	ProcessStopped(p Process) bool
	// DeadLetter records msg, meant for pid, as undeliverable, exactly like
	// the runtime does for its own dead letters: counted
	// (fraktor.deadletters), published as *DeadLetterEvent, logged at most
	// once per interval, and, when the sender is a local future, that
	// future fails at once (with reason, or ErrDeadLetter when reason is
	// nil). A sender PID that names a local process is resolved first, so a
	// PID rebuilt from the wire finds its future.
	DeadLetter(pid *PID, msg any, sender *PID, reason error)
	// FailRequestsTo fails every pending request future whose request went
	// to a process at address, with an error that wraps ErrDeadLetter and
	// reason, and returns how many it failed. A transport calls it when the
	// node at address is declared gone, so requests waiting for it fail at
	// once instead of at their deadline. Its cost is the number of requests
	// pending to address, whatever the number of actors: the requests to
	// other nodes are indexed by address (actor/request_index.go).
	FailRequestsTo(address string, reason error) int
	// RequestMark returns a mark of the requests made so far: every
	// request future created after the call is at or past it, every one
	// created before is before it. A transport takes one when it loses
	// its connection to a node, for FailRequestsToBefore.
	RequestMark() uint64
	// FailRequestsToBefore is FailRequestsTo for the requests created
	// before mark (RequestMark) only; the later ones stay pending. A
	// transport that finds a new incarnation of a node where its
	// connection was lost fails what may have reached the old one (made
	// before the connection was lost) and spares what was made after,
	// which only the new incarnation can get and answer.
	FailRequestsToBefore(address string, reason error, mark uint64) int
	// SetRedirect installs r for the children of parent, a live local
	// actor (a later call for the same parent replaces it). A user message
	// that would become a dead letter because its target, such a child,
	// does not exist (never did, or stopped, including the messages still
	// in its mailbox when it stopped) is offered to r first; a message
	// that r takes is not a dead letter. Messages refused by a full
	// mailbox are not offered, nor are those to deeper descendants. The
	// cluster uses it to forward a message for a grain that is gone to the
	// grain's next activation. It fails with ErrNilPID or ErrDeadLetter
	// when parent is nil or not a live local actor.
	SetRedirect(parent *PID, r Redirect) error
}

// Redirect takes msg, a user message (as sent, envelope included) from
// sender (nil when none) for child, a child that does not exist of the
// actor it was installed for, whose name (as spawned, or as it would have
// been) is name; it reports whether it took msg. When it did not, msg
// becomes a dead letter. It runs on the goroutine that found the target
// missing (a worker, the sender's, a transport's reader) and must not
// block. A panic in it is logged and msg becomes a dead letter.
type Redirect func(child *PID, name string, msg any, sender *PID) bool

// redirect is one Redirect and the ID prefix of the children it takes.
type redirect struct {
	prefix string
	r      Redirect
}

// RemoteHandler resolves PIDs of other addresses to their proxy process; nil
// means the PID has no process (it becomes a dead letter).
type RemoteHandler func(pid *PID) Process

// host is the system's Host.
type host struct{ s *System }

var _ Host = host{}

func (h host) System() *System                     { return h.s }
func (h host) Name() string                        { return h.s.name }
func (h host) Address() string                     { return h.s.Address() }
func (h host) Logger() *slog.Logger                { return h.s.logger }
func (h host) Clock() scheduler.Clock              { return h.s.clock }
func (h host) MeterProvider() metric.MeterProvider { return h.s.metrics.mp }
func (h host) EventStream() *EventStream           { return h.s.events }
func (h host) Root() *RootContext                  { return h.s.root }

func (h host) FailRequestsTo(address string, reason error) int {
	return h.s.failRequestsTo(address, reason, 0)
}

func (h host) RequestMark() uint64 { return h.s.futureSeq.Load() + 1 }

func (h host) FailRequestsToBefore(address string, reason error, mark uint64) int {
	return h.s.failRequestsTo(address, reason, mark)
}

func (h host) SpawnSystem(props *Props, name string) (*PID, error) {
	return h.s.spawn(h.s.systemGuardian, nil, props, name, "")
}

func (h host) SetAddress(addr string) { h.s.address.Store(&addr) }

func (h host) SetRemoteHandler(r RemoteHandler) {
	if r == nil {
		// No handler: PIDs of other addresses are dead letters again.
		h.s.remote.Store(nil)
		return
	}
	h.s.remote.Store(&r)
	h.s.registerFutures.Store(true)
}

func (h host) SetTimeoutCause(fn func(address string) error) {
	if fn == nil {
		h.s.timeoutCause.Store(nil)
		return
	}
	h.s.timeoutCause.Store(&fn)
}

func (h host) SetRedirect(parent *PID, r Redirect) error {
	s := h.s
	if parent == nil {
		return ErrNilPID
	}
	c := s.liveCell(parent)
	if c == nil {
		return fmt.Errorf("%w: SetRedirect: %s is not a live local actor", ErrDeadLetter, parent)
	}
	prefix := string(childPrefix(nil, c))
	s.redirectMu.Lock()
	defer s.redirectMu.Unlock()
	var next []redirect
	if cur := s.redirects.Load(); cur != nil {
		for _, x := range *cur {
			if x.prefix != prefix {
				next = append(next, x)
			}
		}
	}
	next = append(next, redirect{prefix: prefix, r: r})
	s.redirects.Store(&next)
	return nil
}

func (h host) Lookup(id string) (Process, bool) {
	p, ok := h.s.registry.get(id)
	if !ok {
		return nil, false
	}
	switch p.(type) {
	case *cell, *Future:
		return p, true
	}
	return &guardedProcess{s: h.s, p: p, id: id}, true
}

// guardedProcess is a custom process (RegisterProcess) as Host.Lookup hands
// it to an extension: a transport delivers to what it looked up directly,
// on its connection's reader, so a panic in the process's SendUser or
// SendSystem is made a dead letter here, as the runtime's own sends do
// (sendToProcess), instead of ending the process from the reader.
//
// id is the ID it was looked up by: ProcessStopped reports it stopped once
// that ID no longer names p (UnregisterProcess, perhaps another process
// registered under the ID since).
type guardedProcess struct {
	s  *System
	p  Process
	id string
}

func (g *guardedProcess) SendUser(pid *PID, msg any, sender *PID) {
	g.s.sendToProcess(g.p, pid, msg, sender)
}

func (g *guardedProcess) SendSystem(pid *PID, m SystemMessage) {
	g.s.sendSystemToProcess(g.p, pid, m)
}

func (g *guardedProcess) StopProcess(pid *PID) { g.p.StopProcess(pid) }

func (h host) ProcessStopped(p Process) bool {
	switch p := p.(type) {
	case *cell:
		return p.mb.Closed()
	case *Future:
		return p.state.Load() != 0
	case *guardedProcess:
		// A cache of looked-up processes (the remote extension's inbound
		// targets) would otherwise keep an unregistered custom process for
		// good, and never reach what is registered under its ID since
		// (TestReregisteredCustomProcessFromTheWire in remote).
		cur, ok := h.s.registry.get(p.id)
		return !ok || cur != p.p
	}
	return false
}

func (h host) DeadLetter(pid *PID, msg any, sender *PID, reason error) {
	s := h.s
	if sender != nil && sender.cached() == nil && (sender.Address == s.Address() || sender.Address == LocalAddress) {
		if p, ok := s.registry.get(sender.ID); ok {
			sender.cache(p)
		}
	}
	s.deadLetter(pid, msg, sender, reason)
}
