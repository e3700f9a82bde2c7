package mailbox_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/mailbox"
)

// A capacity below 1 is 1 (NewBounded's doc, docs/actors.md "Mailboxes"):
// a zero-valued setting gives a one-message mailbox, not an unbounded one
// and not a refusal of everything.
func TestBoundedCapacityBelowOneIsOne(t *testing.T) {
	for _, capacity := range []int{0, -1} {
		q := mailbox.NewBounded[int](capacity, mailbox.Reject)
		_, dropped, err := q.Push(1)
		require.NoError(t, err)
		require.False(t, dropped)
		_, _, err = q.Push(2)
		require.ErrorIs(t, err, mailbox.ErrFull, "capacity %d", capacity)
	}
}
