package dashboard

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// clip cuts on a rune boundary: a cut inside a multi-byte rune would send
// invalid UTF-8, which encoding/json replaces, garbling the text's end.
func TestClipKeepsRunes(t *testing.T) {
	require.Equal(t, "short", clip("short", 10))
	for _, s := range []string{strings.Repeat("é", 400), strings.Repeat("日本", 300), "a" + strings.Repeat("🙂", 300)} {
		for n := 4; n < 40; n++ {
			got := clip(s, n)
			require.LessOrEqual(t, len(got), n)
			require.True(t, utf8.ValidString(got), "%q cut at %d", got, n)
			require.True(t, strings.HasSuffix(got, "…"))
		}
	}
}
