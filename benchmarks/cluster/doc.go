// Package clusterbench measures fraktor-go's cluster against protoactor-go's
// cluster, side by side in one process: three members per implementation,
// each an actor system with remote on its own loopback TCP port, grains of
// one kind ("echo") that answer every message with itself, and the same
// 64-byte protobuf payload (wrapperspb.BytesValue).
//
// fraktor-go runs cluster.Install with the in-memory registry
// (cluster.MemoryRegistry); protoactor-go runs cluster.New with its test
// provider (clusterproviders/test, one shared InMemAgent) and the disthash
// identity lookup, as its own cluster tests do.
//
// Workloads (workload.go): the warm round trip to a grain on another member
// next to the plain remote round trip to an ordinary actor on that member,
// cold activation latency (owner local and owner remote), throughput with
// callers on every member over many identities, and the memory of idle
// activated grains. docs/benchmarks.md ("Cluster") has the figures.
package clusterbench
