package cluster

import (
	"testing"
	"unsafe"
)

// One activation exists per activated grain, and it is the grain's lease
// too: it stays within the 112-byte size class (the token, not a whole
// Lease; a pointer to the shared Kind, not a copy; times as Unix
// nanoseconds, not 24-byte time.Time values).
func TestActivationSize(t *testing.T) {
	if n := unsafe.Sizeof(activation{}); n > 112 {
		t.Fatalf("activation is %d bytes, more than 112", n)
	}
}

// The ledger keeps one entry per held identity: without the identity (its
// map key) and the epoch (its token's), which Lease repeats.
func TestLedgerEntrySize(t *testing.T) {
	if n := unsafe.Sizeof(ledgerEntry{}); n > 80 {
		t.Fatalf("ledger entry is %d bytes, more than 80", n)
	}
}

// Every RequestFuture and CallFuture allocates one queuedRequest (its
// first attempt): it stays within the 96-byte size class (its tries, an
// int32, shares a word with abandoned).
func TestQueuedRequestSize(t *testing.T) {
	if n := unsafe.Sizeof(queuedRequest{}); n > 96 {
		t.Fatalf("queuedRequest is %d bytes, more than 96", n)
	}
}
