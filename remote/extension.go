package remote

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/extension"
)

// Name is the remote extension's name in a system's extension registry.
const Name = "remote"

// Install returns the installer of the remote extension, for
// actor.SystemConfig.Extensions. It validates cfg before anything is
// installed; installing starts a Node (TCP, with TLS when cfg has TLS
// settings; opts may replace the transport or share a BlockList), makes the
// system's PIDs carry the Node's advertised address, and routes every PID of
// another address through the Node. The system's Shutdown closes the Node
// (see Remote.Shutdown).
//
// The Config's Logger defaults to the system's logger and its Serializers
// to a registry with the built-in messages only; the Node's clock is the
// system's (actor.SystemConfig.Clock) unless opts has WithClock, and the
// Node publishes its instruments (WithMeterProvider) on the system's
// MeterProvider (actor.SystemConfig.MeterProvider) unless opts has
// WithMeterProvider.
func Install(cfg Config, opts ...Option) actor.ExtensionInstaller {
	return &installer{cfg: cfg, opts: opts}
}

type installer struct {
	cfg  Config
	opts []Option
}

func (i *installer) Name() string       { return Name }
func (i *installer) Requires() []string { return nil }
func (i *installer) Enabled() bool      { return true }
func (i *installer) Validate() error    { return i.cfg.Validate() }

func (i *installer) Install(ctx context.Context, sys actor.Host) (actor.Extension, error) {
	return newRemote(ctx, sys, i.cfg, i.opts)
}

// Get returns the remote extension of sys, or nil when it is not installed
// (or has shut down).
func Get(sys *actor.System) *Remote {
	r, _ := extension.Get[*Remote](sys.Extensions(), Name)
	return r
}

// Remote is the remote extension of one actor system: its Node, the
// processes that stand for PIDs of other nodes, remote watch bookkeeping and
// remote spawn. Obtain it with Get. All methods are safe for concurrent use.
//
// Routing: a PID whose Address is neither this node's advertised address nor
// actor.LocalAddress resolves (once; the PID caches it) to a small process
// that serializes what is sent to it and hands it to Node.Send. Messages
// from one sender to one receiver arrive in the order they were sent. What
// cannot be delivered, in either direction, becomes a dead letter of the
// system that noticed, with the reason (ErrUnknownType, ErrQueueFull,
// ErrBlocked, ErrPeerUnreachable, ErrStopped, ...); a local future waiting
// for an answer fails at once with that reason.
type Remote struct {
	sys   actor.Host
	node  *Node
	log   *slog.Logger
	kinds map[string]*actor.Props
	addr  atomic.Pointer[string]
	proc  *remoteProcess // every PID of another node the system resolved
	// replyProc serves the PIDs of other nodes that peers named (replyPID,
	// senders): what is sent to them is sendReply.
	replyProc *remoteProcess

	watches watchTable
	spawns  spawnTable
	spawned spawnedByPeers // the live actors peers spawned here, per peer address
	targets targetCache    // local targets of inbound messages
	senders pidCache       // senders of inbound messages on other nodes

	// lost holds the request marks of the peers whose connection closed,
	// for a restart's report (peerTerminated).
	lost lostMarks
	// downs holds why the last connection to an address failed, for the
	// timeouts of requests to it (Host.SetTimeoutCause).
	downs linkDowns

	// refusedLog throttles the log of this node's watches that peers
	// refused (TerminatedWatchRefused): at most one line a second.
	refusedLog logThrottle
	// unmatchedLog throttles the log of answers to no pending future
	// (ErrNoSuchFuture); spawnLog that of spawns refused at
	// Config.MaxSpawnsPerPeer.
	unmatchedLog, spawnLog logThrottle
	// backlogLog throttles the log of user messages refused at
	// Config.MaxMailboxBacklog.
	backlogLog logThrottle

	unsubBlock   func()
	shutdownOnce sync.Once
	shutdownErr  error
}

var _ actor.Extension = (*Remote)(nil)

func newRemote(ctx context.Context, sys actor.Host, cfg Config, opts []Option) (*Remote, error) {
	if cfg.Logger == nil {
		cfg.Logger = sys.Logger()
	}
	if cfg.Serializers == nil {
		cfg.Serializers = NewSerializers()
	}
	r := &Remote{sys: sys, log: cfg.Logger, kinds: maps.Clone(cfg.Kinds)}
	r.proc = &remoteProcess{r: r, cls: sendLocal}
	r.replyProc = &remoteProcess{r: r, cls: sendReply}
	r.watches.init(cfg.maxWatchesPerPeer())
	r.spawns.init()
	r.spawned.init(cfg.maxSpawnsPerPeer(), actor.LocalAddress)
	r.targets.init()
	r.senders.init(r.replyProc)
	// The system's clock and MeterProvider first: an option given to
	// Install may replace them.
	opts = append([]Option{WithClock(sys.Clock()), WithMeterProvider(sys.MeterProvider())}, opts...)
	node, err := NewNode(cfg, Hooks{
		Deliver:        r.deliver,
		Undelivered:    r.undelivered,
		PeerTerminated: r.peerTerminated,
		Event:          r.event,
		remote:         r,
	}, opts...)
	if err != nil {
		return nil, err
	}
	r.node = node
	// The resolver goes in before the Node listens: a peer that is already
	// redialing this address may deliver at once, and the PIDs of its
	// senders must route back to it. Until SetAddress below, the resolver
	// itself treats this node's address as local.
	sys.SetRemoteHandler(r.resolve)
	sys.SetTimeoutCause(r.downs.why)
	if err := node.Start(ctx); err != nil {
		return nil, err
	}
	addr := node.Address()
	r.addr.Store(&addr)
	sys.SetAddress(addr)
	r.unsubBlock = node.BlockList().Subscribe(r.onBlockEvent)
	r.log.Debug("remote: installed", "address", addr, "node", node.NodeID(), "kinds", len(r.kinds))
	return r, nil
}

// Shutdown closes the Node (see Node.Close: queues are flushed and peers
// told goodbye within ctx; what is left becomes dead letters), fails pending
// remote spawns with ErrStopped and waits for every goroutine of the
// extension. The actor system calls it (before stopping its actors); later
// sends to remote PIDs become dead letters with ErrStopped. Idempotent.
func (r *Remote) Shutdown(ctx context.Context) error {
	r.shutdownOnce.Do(func() {
		if r.unsubBlock != nil {
			r.unsubBlock()
		}
		r.shutdownErr = r.node.Close(ctx)
		r.spawns.failAll(fmt.Errorf("%w: remote shut down", ErrStopped))
		r.log.Debug("remote: shut down", "address", r.Address())
	})
	return r.shutdownErr
}

// Terminated implements extension.Lingerer: closed once the Node's
// goroutines have returned. A Shutdown whose ctx ended waits for them
// only WriteTimeout after closing every socket (one may be in a codec
// that does not return); System.Terminated waits for the rest.
func (r *Remote) Terminated() <-chan struct{} { return r.node.Terminated() }

// Address is this node's advertised address: the Address of its PIDs.
func (r *Remote) Address() string {
	if p := r.addr.Load(); p != nil {
		return *p
	}
	return r.node.Address()
}

// NodeID is this process incarnation's node ID.
func (r *Remote) NodeID() string { return r.node.NodeID() }

// Node returns the underlying Node (stats, and Close for tests that
// simulate a crash: peers see what a dead process shows them, and a
// cluster member whose Node ends is fenced for good and ends its
// membership, see docs/cluster.md).
func (r *Remote) Node() *Node { return r.node }

// BlockList returns the BlockList the Node enforces. Blocking a node (by ID
// or address) refuses its handshakes, closes its connection, turns what
// would be sent to it into dead letters (ErrBlocked), tells local watchers of
// its actors Terminated{AddressTerminated}, and publishes the change on the
// EventStream as *BlockEvent.
func (r *Remote) BlockList() *BlockList { return r.node.BlockList() }

// Serializers returns the message type registry.
func (r *Remote) Serializers() *Serializers { return r.node.Serializers() }

// isLocal reports whether addr names this node.
func (r *Remote) isLocal(addr string) bool {
	return addr == actor.LocalAddress || addr == r.Address()
}

// resolve is the system's RemoteHandler: the process of a PID that the
// system did not recognize as local.
func (r *Remote) resolve(pid *actor.PID) actor.Process {
	if r.isLocal(pid.Address) {
		// Only before SetAddress: the system treats it as local afterwards.
		if p, ok := r.sys.Lookup(pid.ID); ok {
			return p
		}
		return nil
	}
	return r.proc
}

// SystemName returns the name this node's handshake requires of its peers
// (Config.SystemName).
func (r *Remote) SystemName() string { return r.node.cfg.SystemName }
