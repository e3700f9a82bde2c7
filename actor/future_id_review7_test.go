package actor

import (
	"strconv"
	"testing"
	"unsafe"
)

// oldFutureID is the ID as formed before 6a8166d (future$ and the
// sequence in base 36, 16-byte buffer), for the cost comparison below.
type oldFutureID [16]byte

func (b *oldFutureID) format(seq uint64) string {
	buf := append(b[:0], futureIDPrefix...)
	buf = strconv.AppendUint(buf, seq, 36)
	if len(buf) > len(b) {
		return string(buf)
	}
	return unsafe.String(&b[0], len(buf))
}

var review7Sink string

// BenchmarkReview7FutureIDOld and BenchmarkReview7FutureIDNew measure
// what the random tag adds to a request: forming a future's ID, old and
// new, from a sequence at a 45-bit base as futureSeqBase draws.
func BenchmarkReview7FutureIDOld(b *testing.B) {
	var id oldFutureID
	seq := futureSeqBase()
	for b.Loop() {
		seq++
		review7Sink = id.format(seq)
	}
}

func BenchmarkReview7FutureIDNew(b *testing.B) {
	var id futureID
	seq := futureSeqBase()
	for b.Loop() {
		seq++
		review7Sink = id.format(seq, newFutureTag())
	}
}

// The longest ID (a 64-bit sequence, 11 digits) fits the buffer, so the
// branch of format that allocates never runs; and seqOfFutureID reads back
// every sequence format writes.
func TestReview7FutureIDFitsAndRoundTrips(t *testing.T) {
	var id futureID
	for _, seq := range []uint64{0, 1, 63, 64, futureSeqBase(), 1<<48 - 1, 1 << 48, 1<<64 - 1} {
		for _, tag := range []uint64{0, 1<<64 - 1, newFutureTag()} {
			s := id.format(seq, tag)
			if unsafe.StringData(s) != &id[0] {
				t.Fatalf("ID %q (seq %d) allocated", s, seq)
			}
			got, ok := seqOfFutureID(s)
			if !ok || got != seq {
				t.Fatalf("seqOfFutureID(%q) = %d, %v; want %d", s, got, ok, seq)
			}
		}
	}
}
