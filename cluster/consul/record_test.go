package consul

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
)

func TestRecordRoundTrip(t *testing.T) {
	ks := newKeyspace("fraktor", "prod")
	for _, m := range []cluster.Member{
		{ID: "node-1", Incarnation: 42, Address: "10.0.0.1:4000", Kinds: []string{"user", "cart"}, Weight: 3},
		{ID: "with/slash and space", Incarnation: 1},
		{ID: "ユニコード", Incarnation: 1<<64 - 1, Address: "[::1]:1"},
	} {
		key := ks.member(m)
		require.True(t, strings.HasPrefix(key, "fraktor/prod/members/"))
		rel := strings.TrimPrefix(key, ks.members())
		assert.Equal(t, 1, strings.Count(rel, "/"), "the ID must stay one key segment")
		value, err := encodeRecord(m, time.Time{})
		require.NoError(t, err)
		got, releasedAt, err := decodeRecord(rel, value)
		require.NoError(t, err)
		assert.Equal(t, m, got)
		assert.True(t, releasedAt.IsZero())
		assert.NotContains(t, string(value), "released_at")

		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		value, err = encodeRecord(m, at)
		require.NoError(t, err)
		_, releasedAt, err = decodeRecord(strings.TrimPrefix(ks.releasedKey(m), ks.released()), value)
		require.NoError(t, err)
		assert.Equal(t, at, releasedAt)
	}
}

func TestDecodeRecordRejects(t *testing.T) {
	good, err := encodeRecord(cluster.Member{ID: "a", Incarnation: 1}, time.Time{})
	require.NoError(t, err)
	for _, tc := range []struct {
		name, rel string
		value     []byte
	}{
		{"no incarnation segment", "a", good},
		{"extra segment", "a/1/x", good},
		{"bad incarnation", "a/x", good},
		{"bad escape", "%zz/1", good},
		{"key names another member", "b/1", good},
		{"key names another incarnation", "a/2", good},
		{"escaped letter", "%61/1", good},
		{"leading zero", "a/01", good},
		{"lower-case escape", "a%2fb/1", []byte(`{"id":"a/b","incarnation":1}`)},
		{"needless escape", "a%2Db/1", []byte(`{"id":"a-b","incarnation":1}`)},
		{"not JSON", "a/1", []byte("{")},
		{"empty ID", "/1", []byte(`{"id":"","incarnation":1}`)},
		{"oversized", "a/1", []byte(`{"id":"a","incarnation":1,"address":"` + strings.Repeat("x", maxRecordSize) + `"}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := decodeRecord(tc.rel, tc.value)
			require.ErrorIs(t, err, ErrBadRecord)
			assert.True(t, strings.HasPrefix(err.Error(), "consul: "))
		})
	}
}

func TestValidateMember(t *testing.T) {
	require.NoError(t, validateMember(cluster.Member{ID: "a"}))
	require.ErrorIs(t, validateMember(cluster.Member{}), cluster.ErrInvalidMember)
	require.ErrorIs(t, validateMember(cluster.Member{ID: "a\xff"}), cluster.ErrInvalidMember)
	require.ErrorIs(t, validateMember(cluster.Member{ID: "a", Kinds: []string{"\xfe"}}), cluster.ErrInvalidMember)
	_, err := encodeRecord(cluster.Member{ID: "a", Address: strings.Repeat("x", maxRecordSize)}, time.Time{})
	require.ErrorIs(t, err, cluster.ErrInvalidMember)
}

// FuzzDecodeRecord: KV values come from the network; decoding never panics,
// whatever decodes sits at its member's canonical key, and re-encodes to a
// record that decodes to the same member.
func FuzzDecodeRecord(f *testing.F) {
	good, _ := encodeRecord(cluster.Member{ID: "a", Incarnation: 7, Address: "h:1", Kinds: []string{"k"}, Weight: 2}, time.Unix(5, 0))
	f.Add("a/7", good)
	f.Add("a/7", []byte(`{"id":"a","incarnation":7,"kinds":null}`))
	f.Add("%2F/1", []byte(`{"id":"/","incarnation":1}`))
	f.Add("a/1", []byte(`[]`))
	f.Fuzz(func(t *testing.T, rel string, value []byte) {
		m, at, err := decodeRecord(rel, value)
		if err != nil {
			require.ErrorIs(t, err, ErrBadRecord)
			return
		}
		require.Equal(t, recordPath(m.ID, m.Incarnation), rel, "only the canonical key decodes")
		again, err := encodeRecord(m, at)
		if err != nil {
			return // not valid UTF-8: Join would have refused this member
		}
		m2, at2, err := decodeRecord(rel, again)
		if !validUTF8(m) {
			return
		}
		require.NoError(t, err)
		assert.Equal(t, m, m2)
		assert.True(t, at.Equal(at2))
	})
}

func validUTF8(m cluster.Member) bool { return validateMember(m) == nil }
