package actor

import (
	"context"
	"strings"
	"testing"
)

// Generated IDs start at a random base (idSeqBase): two systems, like two
// incarnations of a node at one address, give their first actors (and
// their first children) different IDs, so a PID of one never resolves in
// the other. With DeterministicIDs both count from 1.
func TestGeneratedIDsDifferAcrossSystems(t *testing.T) {
	firstIDs := func(deterministic bool) (top, nested string) {
		sys, err := NewSystem(SystemConfig{DeterministicIDs: deterministic})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = sys.Shutdown(context.Background()) }()
		kid := make(chan *PID, 1)
		parent := sys.Root().Spawn(PropsFromFunc(func(c Context) {
			if _, ok := c.Message().(*Started); ok {
				kid <- c.Spawn(PropsFromFunc(func(Context) {}))
			}
		}))
		return parent.ID, (<-kid).ID
	}
	top1, nested1 := firstIDs(false)
	top2, nested2 := firstIDs(false)
	if top1 == top2 || nested1 == nested2 {
		t.Fatalf("two systems generated the same IDs: %q %q, %q %q", top1, top2, nested1, nested2)
	}
	// The other system's PIDs stay of the generated form (they resolve
	// through the sequence table) and fit the cell's inline buffer.
	for _, id := range []string{top1, nested1} {
		if _, ok := seqOf(id); !ok || len(id) > len(cellID{}) {
			t.Fatalf("generated ID %q: not of the generated form, or longer than cellID", id)
		}
	}
	if !strings.HasPrefix(nested1, "#") {
		t.Fatalf("nested ID %q", nested1)
	}
	for range 2 {
		top, nested := firstIDs(true)
		if top != "$1" || !strings.HasSuffix(nested, "/$2") {
			t.Fatalf("DeterministicIDs: first IDs %q, %q; want \"$1\", \"#<parent>/$2\"", top, nested)
		}
	}
}
