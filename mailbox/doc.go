// Package mailbox holds the Mailbox of an actor, which pairs a system queue
// with a user queue (the lock-free MPSC queues of internal/queue, or a Queue
// such as NewBounded or NewPriority) and keeps the atomic idle/scheduled
// status, so that one post schedules the mailbox at most once.
package mailbox
