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
//     bounded queue per peer, coalesces them into one frame per write, sends
//     heartbeats, reconnects with exponential backoff and jitter, and reports a
//     peer that stays unreachable as terminated. Inbound envelopes go to the
//     [Hooks] supplied by the caller (the actor runtime's endpoint manager).
//   - [BlockList] refuses blocked nodes both ways.
//
// The actor-facing parts (remote PIDs, remote watch, remote spawn, the
// extension installer) are built on top of [Node] by the actor runtime.
package remote
