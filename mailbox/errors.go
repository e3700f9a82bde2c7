package mailbox

import "errors"

// ErrFull is returned by a bounded queue with the Reject policy when it is full.
var ErrFull = errors.New("mailbox: full")
