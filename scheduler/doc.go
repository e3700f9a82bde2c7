// Package scheduler runs mailboxes on a fixed pool of workers.
//
// It knows nothing of actors. A mailbox that has work becomes a [Runnable] and
// is handed to a [Dispatcher]; the [Coordinator] keeps a ready queue of
// runnables and a fixed pool of worker goroutines (default GOMAXPROCS) that
// drain it. Each worker calls [MessageInvoker.InvokeBatch] and acts on the
// [InvokeResult]: re-queue, idle, resume after a delay, hand a failure to the
// failure hook, or drop a stopped runnable (requirements S1–S10).
//
// A goroutine outside the pool that would block waiting for a turn's
// outcome may run the turn itself while the process's workers are all
// parked ([Coordinator.BeginCallerTurn], caller_turn.go).
//
// The [Manual] executor drives the same contracts step by step from a test,
// with a [ManualClock] for resume timers and backoff, so a scenario gives the
// same trace on every run.
package scheduler
