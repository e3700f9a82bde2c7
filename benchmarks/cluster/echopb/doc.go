// Package echopb is the typed echo grain of the cluster benchmarks: the same
// message and work as the untyped echo kind, called through the client that
// protoc-gen-fraktor-grain generates.
package echopb
