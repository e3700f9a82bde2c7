package actor

import (
	"math/rand/v2"
	"strings"
	"unsafe"
)

// futureIDPrefix starts every future's ID; the rest is the future's
// sequence number and a random tag (futureID.format).
const futureIDPrefix = "future$"

// IsFutureID reports whether id has the form of a future's ID (the sender
// of RequestFuture's and Request's message), on any node. Remote uses it to
// tell only futures, not actors, of a reply that can never reach them.
func IsFutureID(id string) bool { return strings.HasPrefix(id, futureIDPrefix) }

// futureTagLen is the length of the random tag that ends a future's ID:
// 11 digits of futureDigits, 64 random bits.
const futureTagLen = 11

// futureDigits are the digits of a future's ID: 64 of them, 6 bits each,
// none of them '/' or '$'.
const futureDigits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_"

// futureID holds a future's ID inside the Future itself. A request makes a
// future, and its ID was the one allocation of a request besides the future
// and its done channel; built here, the string's bytes live in the Future's
// own allocation (the Future with this buffer stays in the 224-byte size
// class), so Request and StopFuture allocate once less. The string is
// written once, before the future is published, and never changed, which
// is what unsafe.String requires. TestFutureIDInline pins it.
type futureID [32]byte

// format writes a future's ID into b and returns it: futureIDPrefix, seq in
// base 64 (futureDigits, as few digits as it takes), then futureTagLen
// digits of tag. The sequence orders futures (RequestMark, seqOfFutureID);
// the tag makes the ID a capability: whoever is given it (the request's
// target, and whoever that target forwards the request to) can answer the
// future, and no one can derive another future's ID from it. Without the
// tag the IDs were a sequence, and a peer that saw one future's ID as the
// sender of a request could name the pending futures around it and
// complete them with answers of its choosing (TestForgedAnswerToFuture,
// remote). The longest ID (7 + 11 + 11 bytes: a 64-bit sequence) fits the
// buffer (TestReview7FutureIDFitsAndRoundTrips); the allocation below is
// only a guard.
func (b *futureID) format(seq, tag uint64) string {
	var digits [11]byte
	i := len(digits)
	for {
		i--
		digits[i] = futureDigits[seq&63]
		seq >>= 6
		if seq == 0 {
			break
		}
	}
	buf := append(b[:0], futureIDPrefix...)
	buf = append(buf, digits[i:]...)
	for k := futureTagLen - 1; k >= 0; k-- {
		buf = append(buf, futureDigits[(tag>>(6*uint(k)))&63])
	}
	if len(buf) > len(b) {
		return string(buf)
	}
	return unsafe.String(&b[0], len(buf))
}

// newFutureTag returns a future ID's random tag: 64 bits of the runtime's
// ChaCha8 generator (math/rand/v2's top-level functions), seeded from the
// operating system's entropy, per thread: no lock, no allocation, a few
// nanoseconds.
func newFutureTag() uint64 { return rand.Uint64() }

// seqOfFutureID returns the sequence number of a future's ID (format), or
// 0 and false when id is not of that form.
func seqOfFutureID(id string) (uint64, bool) {
	if !IsFutureID(id) || len(id) < len(futureIDPrefix)+1+futureTagLen {
		return 0, false
	}
	var seq uint64
	for _, ch := range []byte(id[len(futureIDPrefix) : len(id)-futureTagLen]) {
		d := strings.IndexByte(futureDigits, ch)
		if d < 0 || seq>>58 != 0 {
			return 0, false
		}
		seq = seq<<6 | uint64(d)
	}
	return seq, true
}
