// Package actor is the user API of fraktor-go: the System, Props, PIDs, the
// actor Context, futures and requests, lifecycle messages, supervision, the
// EventStream and dead letters.
//
// An actor is a value that implements Receive(Context). The system runs it on
// a mailbox scheduled by the scheduler package: one message at a time, never
// on two goroutines at once, with system messages (stop, watch, supervision
// directives) ahead of user messages. A panic in Receive is a failure handled
// by the parent's supervisor strategy, never a crashed process.
//
// Acting later: Context.SendAfter, SendEvery and Timers arm timers the actor
// owns (cancelled when it stops or restarts); Context.ReenterAfter runs a
// callback on the actor's own turn once a Future completes. All timers and
// request timeouts share one deadline heap on the system's Clock. Spawns
// can be wrapped with SpawnMiddleware (WithSpawnMiddleware,
// SystemConfig.SpawnMiddleware).
//
// docs/actors.md starts with the basics (Props, spawning, replies,
// supervision strategies, bounded mailboxes, Stash and Become, watching,
// shutdown, actors on two nodes) and then covers timers, continuations and
// spawn middleware; the package's Example functions run them.
package actor
