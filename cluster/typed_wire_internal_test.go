package cluster

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestWireText: a GrainError's text is cut at a rune boundary to
// maxWireText bytes and made valid UTF-8, so it can cross the wire.
func TestWireText(t *testing.T) {
	for _, s := range []string{"short", strings.Repeat("é", maxWireText), strings.Repeat("x", 5*maxWireText), "a\xffb", strings.Repeat("\xff", maxWireText)} {
		got := wireText(s)
		if len(got) > maxWireText || !utf8.ValidString(got) {
			t.Fatalf("wireText(%.20q...) = %d bytes, valid %v", s, len(got), utf8.ValidString(got))
		}
		if len(s) <= maxWireText && utf8.ValidString(s) && got != s {
			t.Fatalf("wireText(%q) = %q, want it unchanged", s, got)
		}
	}
}
