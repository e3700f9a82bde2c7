// Package clusterpb holds the cluster runtime's own wire messages between
// members' placement actors (generated from cluster.proto by protoc-gen-go).
package clusterpb
