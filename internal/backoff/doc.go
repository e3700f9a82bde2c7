// Package backoff computes retry waits for reconnecting and re-polling loops
// (the remote endpoints, the Consul provider).
package backoff
