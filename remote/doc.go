// Package remote carries actor messages between fraktor-go systems over the
// network: the wire format, the handshake, the serializer registry, the
// transports (TCP with optional TLS or mutual TLS, and an in-memory network for
// tests), the per-peer connection manager and the BlockList.
//
// # Layers
//
//   - [Transport] opens byte streams: [TCPTransport] over real sockets,
//     [MemoryNetwork] inside one process. Everything above a Transport is the
//     same code for both.
//   - The frame codec (see docs/remote.md for the exact layout) reads and writes
//     versioned, length-prefixed frames. The maximum frame size is checked
//     before anything is allocated, and decoding never panics on any input.
//   - The handshake exchanges a hello (protocol version, system name, node ID,
//     advertised address) before any envelope is accepted; a mismatch is
//     answered with a reject frame carrying a reason, and the connection closes.
//   - [Serializers] turn messages into payload bytes: protobuf messages by full
//     name, other Go types by explicit JSON registration, and the runtime's
//     system messages ([Watch], [Terminated], [SpawnRequest], ...) by a compact
//     built-in encoding. Nothing is instantiated from a type name that was not
//     registered.
//   - [Node] is this process's presence on the network: it listens, dials
//     lazily, keeps one connection per peer pair, queues outbound envelopes in a
//     bounded queue per peer, coalesces them into one frame per write (or,
//     when the connection is idle, lets the sender write its envelope
//     itself, saving a goroutine hand-off per message), sends
//     heartbeats, reconnects with exponential backoff and jitter, and reports a
//     peer that stays unreachable as terminated. Inbound envelopes go to the
//     [Hooks] supplied by the caller (the remote extension, [Remote]).
//   - [BlockList] refuses blocked nodes both ways.
//
// A Node counts what it does ([Node.Stats]) and, given a MeterProvider
// ([WithMeterProvider]; the remote extension passes the actor system's),
// publishes those counters as asynchronous OpenTelemetry instruments
// fraktor.remote.* (meter [MeterName]), read when the provider collects,
// never on the message path, and without attributes, so that peers cannot
// grow their number (docs/observability.md).
//
// # The actor runtime on top
//
// [Install] is the extension installer for actor.SystemConfig.Extensions and
// [Get] returns the installed [Remote]. With it, a PID whose address is
// another node's resolves to a process that serializes what is sent to it
// and hands it to the Node; inbound envelopes are delivered to local
// processes by ID; a user message from a peer to a local actor whose
// mailbox holds [Config.MaxMailboxBacklog] user messages or more is
// refused (a dead letter with actor.ErrBacklogFull, and a request from
// the peer fails at once with actor.ErrMailboxFull). Remote watch (with Terminated{AddressTerminated} when a
// node is gone, and when a node that had reported this one gone connects
// again and says so: [WatchesDropped]; the watches one peer address holds
// here are bounded by [Config.MaxWatchesPerPeer], and one beyond is
// answered [TerminatedWatchRefused]), remote stop and poison,
// request/response across nodes (a future answers only those it was sent
// to: its ID ends in a random tag, and an answer to no pending future is
// [ErrNoSuchFuture]), remote spawn of a registered kind
// ([Remote.SpawnNamed]; the live actors one peer address spawned here are
// bounded by [Config.MaxSpawnsPerPeer], beyond it [ErrTooManySpawns]), dead
// letters on both sides with the reason, and
// EventStream events ([EndpointTerminated], [WatchesDroppedEvent],
// [BlockEvent], [Event]) are described in docs/remote.md.
package remote
