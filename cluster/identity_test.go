package cluster

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIdentityString(t *testing.T) {
	tests := []struct {
		name string
		id   Identity
		want string
	}{
		{"plain", NewIdentity("account", "42"), "account/42"},
		{"slash in id", NewIdentity("account", "a/b"), "account/a/b"},
		{"slash in kind", NewIdentity("a/b", "c"), "a%2Fb/c"},
		{"percent in kind", NewIdentity("50%", "x"), "50%25/x"},
		{"dot in both", NewIdentity("a.b", "c"), "a.b/c"},
		{"unicode", NewIdentity("口座", "番号"), "口座/番号"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.id.String())
			back, err := ParseIdentity(tt.id.String())
			require.NoError(t, err)
			assert.Equal(t, tt.id, back)
		})
	}
}

// The string form is injective: the protoactor-go style id+"."+kind is not.
func TestIdentityStringUnambiguous(t *testing.T) {
	pairs := [][2]Identity{
		{NewIdentity("a.b", "c"), NewIdentity("a", "b.c")},
		{NewIdentity("a/b", "c"), NewIdentity("a", "b/c")},
		{NewIdentity("a%2Fb", "c"), NewIdentity("a/b", "c")},
		{NewIdentity("a%", "2Fb"), NewIdentity("a/b", "")},
	}
	for _, p := range pairs {
		assert.NotEqual(t, p[0].String(), p[1].String(), "%#v vs %#v", p[0], p[1])
	}
	rng := newTestRand(3)
	alphabet := []byte("ab/%2F.")
	seen := map[string]Identity{}
	for range 20000 {
		mk := func() string {
			b := make([]byte, 1+rng.IntN(4))
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			return string(b)
		}
		id := NewIdentity(mk(), mk())
		s := id.String()
		if prev, ok := seen[s]; ok {
			require.Equal(t, prev, id, "two identities share %q", s)
		}
		seen[s] = id
		back, err := ParseIdentity(s)
		require.NoError(t, err)
		require.Equal(t, id, back)
	}
}

func TestParseIdentityErrors(t *testing.T) {
	for _, s := range []string{"", "noslash", "/id", "kind/", "a%2/x", "a%zz/x", "a%/x"} {
		t.Run(s, func(t *testing.T) {
			_, err := ParseIdentity(s)
			assert.ErrorIs(t, err, ErrInvalidIdentity)
		})
	}
	assert.ErrorIs(t, Identity{}.Validate(), ErrInvalidIdentity)
	assert.NoError(t, NewIdentity("k", "i").Validate())
	assert.NoError(t, NewIdentity("kïnd", "ïd/✓").Validate())
	// Not UTF-8: the wire's protobuf strings cannot carry them.
	assert.ErrorIs(t, NewIdentity("k", "a\xffb").Validate(), ErrInvalidIdentity)
	assert.ErrorIs(t, NewIdentity("k\xc3", "i").Validate(), ErrInvalidIdentity)
	_, err := ParseIdentity("k/a\xffb")
	assert.ErrorIs(t, err, ErrInvalidIdentity)
}

func FuzzParseIdentity(f *testing.F) {
	for _, s := range []string{"account/42", "a%2Fb/c", "50%25/x", "x", "%/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseIdentity(s)
		if err != nil {
			return
		}
		require.Equal(t, s, id.String(), "accepted a non-canonical form")
	})
}
