// Package extension is the contract and registry for capabilities installed
// into an actor system from its config (remote, cluster, user-defined ones):
// install order by declared requirements, readiness status, typed lookup and
// shutdown in reverse install order. It imports nothing of fraktor-go.
//
// The package is generic over the host type H, the thing extensions are
// installed into; the actor system uses H = actor.Host, a narrow view of
// the system for extensions:
//
//	type ExtensionInstaller = extension.Installer[Host]
//
// An [Installer] names its extension, lists the extensions it requires, says
// whether it is enabled, validates its config and builds the running
// [Extension]. A [Registry] (one per host, no package-level state) checks the
// whole list before installing anything, installs in requirement order, keeps
// a [Status] per extension that can be queried and observed (requirements
// B1.1–B1.5), and shuts down in reverse install order. Any failure while
// installing shuts down what was already installed, so a failed system start
// leaves nothing running.
//
// Optional capabilities of an Extension are detected by type assertion:
// [Starter] is called once every extension has been installed; a
// [Lingerer] tells when goroutines that outlived its Shutdown have
// returned, which [Registry.AwaitTerminated] waits for.
//
// Extensions are looked up by name and type with [Lookup] or [Get]; an
// extension package wraps that in its own accessor (cluster.Get(sys)).
package extension
