package actor

import (
	"context"
	"strconv"
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

// A future carries its ID and its timeout's heap node in its own allocation
// (futureID, timerNode): a future costs the Future (224-byte size class) and
// its done channel, nothing more, and its ID still reads
// "future$<base 36 sequence>".
func TestFutureIDInline(t *testing.T) {
	if n := unsafe.Sizeof(Future{}); n > 224 {
		t.Fatalf("Future is %d bytes, more than 224", n)
	}
	sys, err := NewSystem(SystemConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sys.Shutdown(context.Background()) }()
	f := sys.newFuture(nil, 0)
	if want := "future$" + strconv.FormatUint(sys.futureSeq.Load(), 36); f.PID().ID != want {
		t.Fatalf("future ID %q, want %q", f.PID().ID, want)
	}
	allocs := testing.AllocsPerRun(1000, func() { sys.newFuture(nil, 0).Complete(nil, nil) })
	if allocs > 2 {
		t.Fatalf("a future costs %.0f allocations, want 2 (the Future and its done channel)", allocs)
	}
	var b futureID
	if got := b.format(1<<64 - 1); got != "future$"+strconv.FormatUint(1<<64-1, 36) {
		t.Fatalf("long ID %q", got)
	}
}
