// Package remotebench measures fraktor-go's remote against protoactor-go's
// remote (gRPC) and against plain TCP sockets (the raw-tcp baseline, the
// machine's limit, and raw-proto, the same with each payload encoded and
// decoded as a protobuf message: the codec's floor) between two OS processes over loopback TCP: one-way
// throughput to a counting sink, request/response round trips to an echo
// actor, and a mixed workload (local round trips beside a remote one-way
// stream, Mixed), with the same 64-byte payload (wrapperspb.BytesValue for
// the frameworks) and the same flow-control window for all.
//
// The measuring process (the "client") starts a peer process that hosts
// the sink and the echo actor (ServePeer, started by StartPeer), connects
// to it and runs OneWay or PingPong. The benchmarks in this package's tests
// re-execute the test binary as the peer (environment variable
// BENCH_PEER=fraktor|protoactor|raw-tcp|raw-proto); cmd/peer is the same peer as a program
// for manual runs. docs/benchmarks.md ("Remote") has the figures.
//
// A Client is used by one goroutine at a time; its workloads must not run
// concurrently with each other, except in Mixed, which runs OneWay beside
// the client's local ping-pong (they share no state).
package remotebench
