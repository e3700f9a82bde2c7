package watchhook

// State is the desired state of one watch, kept by its keeper (the remote
// extension's watch table).
type State interface {
	// Take reports whether the watcher is to watch the process now, and
	// tells the keeper that the process has taken that state (its update
	// is no longer queued). The process calls it exactly once per update
	// it was handed: on its own turn, or, for an actor that has stopped,
	// on the goroutine that drains its mailbox or posts to it (a true
	// answer then gets the watcher Terminated{Stopped}, as a Watch does).
	// It must not block and must not call back into the process.
	Take() bool
}

// Funcs are package actor's implementations.
type Funcs struct {
	Post      func(p, pid, watcher any, s State)
	SystemLen func(pid any) int
}

// funcs is set once, by Install in package actor's initialisation, before
// any other package's code runs.
var funcs Funcs

// Install sets the implementations. Package actor calls it when it is
// initialised; nothing else may.
func Install(f Funcs) { funcs = f }

// Post hands p (an actor.Process, as actor.Host.Lookup returned it; pid,
// an *actor.PID, names it) an update of the watch of watcher (an
// *actor.PID) whose state s keeps. A local actor queues it as a system
// message and calls s.Take when it handles it; any other process (a
// future, a custom process) is handed an *actor.Watch or *actor.Unwatch
// at once, by what s.Take reports. The caller posts one update at a time
// per State: the next only after Take was called for the last.
func Post(p, pid, watcher any, s State) { funcs.Post(p, pid, watcher, s) }

// SystemLen returns the number of system messages queued for pid (an
// *actor.PID) when it names a local actor it was spawned as, else -1. For
// tests and diagnostics: it reads the mailbox's consumer side, so the
// caller must know that the actor does not run its turn meanwhile (it is
// blocked in its Receive, and the caller learned so through a channel or
// a lock).
func SystemLen(pid any) int { return funcs.SystemLen(pid) }
