package actor

import "unsafe"

// cellID holds an actor's ID inside its cell. A spawn with a generated or
// nested ID ("$1k2", "#3f/worker$a") built the ID as a string of its own,
// one small allocation per spawn next to the cell's; here its bytes live in
// the cell's own allocation (the cell stays in the 416-byte size class:
// TestCellSize), read through unsafe.String. The bytes are written once,
// before the cell is published, and never changed, which is what
// unsafe.String requires. An ID longer than the buffer is allocated as
// before. The string keeps the cell reachable while anyone holds it, as a
// future's ID keeps its Future (future_id.go). TestCellIDInline pins it.
type cellID [16]byte

// set copies b into the buffer and returns it as a string, or allocates
// the string when b does not fit.
func (buf *cellID) set(b []byte) string {
	if len(b) > len(buf) || len(b) == 0 {
		return string(b)
	}
	n := copy(buf[:], b)
	return unsafe.String(&buf[0], n)
}
