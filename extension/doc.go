// Package extension is the contract and registry for capabilities installed
// into an actor system from its config (remote, cluster, user-defined ones):
// install order by declared requirements, readiness status, typed lookup and
// shutdown in reverse install order. It imports nothing of fraktor-go.
package extension
