// Package accountpb is the demo's account grain (examples/cluster, `make run`):
// messages from protoc-gen-go and the typed grain from protoc-gen-fraktor-grain
// (`make generate`).
package accountpb
