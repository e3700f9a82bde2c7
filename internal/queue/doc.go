// Package queue holds the lock-free multi-producer, single-consumer queues
// under the module's mailboxes and remote outbound queues: RingMPSC (reusable
// rings that grow and shrink, the user queue of a mailbox and the outbound
// queue of a remote endpoint) and MPSC/InlineMPSC (linked segments, the
// system queue of a mailbox). Producers are any goroutines; one consumer at a
// time pops, as the mailbox's scheduling status guarantees.
package queue
