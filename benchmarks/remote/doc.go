// Package remotebench measures fraktor-go's remote against protoactor-go's
// remote (gRPC) between two OS processes over loopback TCP: one-way
// throughput to a counting sink and request/response round trips to an
// echo actor, with the same 64-byte protobuf payload
// (wrapperspb.BytesValue) and the same flow-control window for both.
//
// The measuring process (the "client") starts a peer process that hosts
// the sink and the echo actor (ServePeer, started by StartPeer), connects
// to it and runs OneWay or PingPong. The benchmarks in this package's tests
// re-execute the test binary as the peer (environment variable
// BENCH_PEER=fraktor|protoactor|raw-tcp); cmd/peer is the same peer as a program
// for manual runs. docs/benchmarks.md ("Remote") has the figures.
//
// A Client is used by one goroutine at a time; its workloads must not run
// concurrently with each other.
package remotebench
