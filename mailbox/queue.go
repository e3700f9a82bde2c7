package mailbox

// Queue is a user-message queue other than the default unbounded MPSC one.
//
// Push is called by any goroutine; it never blocks. When a bounded queue is
// full it applies its overflow policy and reports the value it dropped (the
// new one or the oldest) so the caller can turn it into a dead letter, or
// returns ErrFull without enqueuing. Pop, Empty and Len are called by the
// mailbox's single consumer.
type Queue[T any] interface {
	Push(v T) (dropped T, didDrop bool, err error)
	Pop() (T, bool)
	Empty() bool
	Len() int
}

// Overflow is what a bounded queue does when it is full.
type Overflow uint8

const (
	// DropNewest discards the message being posted.
	DropNewest Overflow = iota
	// DropOldest discards the oldest queued message to make room.
	DropOldest
	// Reject refuses the message with ErrFull, which the sender sees.
	Reject
)

func (o Overflow) String() string {
	switch o {
	case DropNewest:
		return "DropNewest"
	case DropOldest:
		return "DropOldest"
	case Reject:
		return "Reject"
	}
	return "Overflow(?)"
}
