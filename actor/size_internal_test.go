package actor

import (
	"testing"
	"unsafe"
)

// The cell stays within the 512-byte size class, which the allocator serves
// without a malloc header: spawning is mostly this allocation.
func TestCellSize(t *testing.T) {
	if n := unsafe.Sizeof(cell{}); n > 512 {
		t.Fatalf("cell is %d bytes, more than 512", n)
	}
}
