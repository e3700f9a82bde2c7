package actor

import (
	"testing"
	"unsafe"
)

// One cell exists per actor: it stays within the 416-byte size class (a
// size the allocator serves without a malloc header), which with no user
// queue ring held while idle keeps an idle actor under 500 bytes.
func TestCellSize(t *testing.T) {
	if n := unsafe.Sizeof(cell{}); n > 416 {
		t.Fatalf("cell is %d bytes, more than 416", n)
	}
}
