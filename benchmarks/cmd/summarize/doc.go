// Command summarize reads `go test -bench` output of the benchmarks module
// (several -count runs of sub-benchmarks named impl=NAME) and prints one
// Markdown table: per workload the median of fraktor-go, of protoactor-go
// and of the fastest raw-Go baseline, and the ratios fraktor/peer and
// fraktor/raw, with the target where the project set one.
//
// Usage: summarize [file]   (standard input when no file is given)
package main
