// Package mailbox holds the queues of an actor: a lock-free MPSC unbounded
// user queue, bounded queues with an overflow policy, a priority queue, and
// the Mailbox that pairs a system queue with a user queue and keeps the
// atomic idle/scheduled status, so that one post schedules the mailbox at
// most once.
package mailbox
