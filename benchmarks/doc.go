// Package benchmarks measures fraktor-go side by side with protoactor-go and
// with raw Go (channels, a lock-free SPSC ring) as the machine's limit, in
// the same process, on the same machine, with the same workloads.
//
// It is its own module so that protoactor-go and the other peer
// dependencies never reach users of the library.
//
// Every workload is a plain function per implementation that runs the
// workload at a given size and returns a result that can be checked (a
// message count, a sum, a number of meetings); the benchmarks in
// bench_test.go time those functions and TestWorkloads runs each of them at
// a tiny size and checks the result, so a benchmark that silently does
// nothing fails. docs/benchmarks.md describes the workloads and the
// settings of both frameworks.
//
// Nothing here is safe for concurrent use by several callers unless said
// so: a workload function owns the actors it spawns and stops them before
// it returns.
package benchmarks
