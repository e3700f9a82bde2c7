// Package watchhook lets package remote hand package actor's processes a
// watch whose desired state the remote extension keeps, without an
// exported API in actor: actor sets the functions when it is initialised,
// remote calls them.
//
// A peer's WatchRequests and UnwatchRequests for one (watcher, watchee)
// pair change one desired state (State). The extension queues an update
// of it in the watchee's system queue only when none is queued already;
// the watchee reads the latest state (Take) when it handles the update,
// and adds or removes the watcher accordingly. So any number of requests
// hold at most one queued system message per pair, where one message per
// request waited for an actor stuck in its Receive before.
package watchhook
