package actor

import (
	"strconv"
	"strings"
	"unsafe"
)

// futureIDPrefix starts every future's ID; the rest is a sequence number in
// base 36.
const futureIDPrefix = "future$"

// IsFutureID reports whether id has the form of a future's ID (the sender
// of RequestFuture's and Request's message), on any node. Remote uses it to
// tell only futures, not actors, of a reply that can never reach them.
func IsFutureID(id string) bool { return strings.HasPrefix(id, futureIDPrefix) }

// futureID holds a future's ID inside the Future itself. A request makes a
// future, and its ID was the one allocation of a request besides the future
// and its done channel; built here, the string's bytes live in the Future's
// own allocation (the Future with this buffer stays in the 192-byte size
// class, as before it), so Request and StopFuture allocate once less. The
// string is written once, before the future is published, and never changed,
// which is what unsafe.String requires. TestFutureIDInline pins it.
type futureID [16]byte

// format writes futureIDPrefix and seq into b and returns the ID. An ID longer
// than the buffer (a sequence past 36^9, about 10^14 futures) is allocated.
func (b *futureID) format(seq uint64) string {
	buf := append(b[:0], futureIDPrefix...)
	buf = strconv.AppendUint(buf, seq, 36)
	if len(buf) > len(b) {
		return string(buf)
	}
	return unsafe.String(&b[0], len(buf))
}
