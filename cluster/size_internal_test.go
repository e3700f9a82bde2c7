package cluster

import (
	"testing"
	"unsafe"
)

// One activation exists per activated grain: it stays within the 144-byte
// size class (lease ID and token, not the whole Lease; a pointer to the
// shared Kind, not a copy).
func TestActivationSize(t *testing.T) {
	// 144 is a size class: the grant time and the stop time (the extent
	// the activation events report) take 16 of them.
	if n := unsafe.Sizeof(activation{}); n > 144 {
		t.Fatalf("activation is %d bytes, more than 144", n)
	}
}

// The ledger keeps one entry per held identity: without the identity (its
// map key) and the epoch (its token's), which Lease repeats.
func TestLedgerEntrySize(t *testing.T) {
	if n := unsafe.Sizeof(ledgerEntry{}); n > 80 {
		t.Fatalf("ledger entry is %d bytes, more than 80", n)
	}
}
