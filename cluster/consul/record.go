package consul

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fraktor-go/fraktor/cluster"
)

// maxRecordSize bounds a record value; Consul itself caps values at 512 KiB.
const maxRecordSize = 64 << 10

// keyspace lays out a cluster's keys:
//
//	<prefix>/<cluster>/members/<escaped ID>/<incarnation>   one per live incarnation
//	<prefix>/<cluster>/released/<escaped ID>/<incarnation>  one per graceful leave
//	<prefix>/<cluster>/incarnations/<escaped ID>            the highest incarnation of the ID ever registered
//	<prefix>/<cluster>/epoch                                the epoch base, added to the view index
//	<prefix>/<cluster>/founded                              the key of the incarnation that founded the cluster (found)
//
// The ID is path-escaped so that an ID containing '/' stays one segment.
type keyspace struct{ root string }

func newKeyspace(prefix, cluster string) keyspace {
	return keyspace{root: prefix + "/" + cluster + "/"}
}

func (k keyspace) members() string  { return k.root + "members/" }
func (k keyspace) released() string { return k.root + "released/" }

func (k keyspace) epochBase() string    { return k.root + "epoch" }
func (k keyspace) founded() string      { return k.root + "founded" }
func (k keyspace) incarnations() string { return k.root + "incarnations/" }

// incarnation is the key of the ID's incarnation record, whose value is
// the highest incarnation ever registered in decimal. It is never deleted.
func (k keyspace) incarnation(id string) string { return k.incarnations() + url.PathEscape(id) }

func (k keyspace) member(m cluster.Member) string {
	return k.members() + recordPath(m.ID, m.Incarnation)
}

func (k keyspace) releasedKey(m cluster.Member) string {
	return k.released() + recordPath(m.ID, m.Incarnation)
}

// recordPath is the canonical "<escaped ID>/<incarnation>" of a member or
// released key: the only spelling of an incarnation that decodeRecord
// accepts.
func recordPath(id string, inc uint64) string {
	return url.PathEscape(id) + "/" + strconv.FormatUint(inc, 10)
}

// record is the JSON value of a member or released key.
type record struct {
	ID          string    `json:"id"`
	Incarnation uint64    `json:"incarnation"`
	Address     string    `json:"address,omitempty"`
	Kinds       []string  `json:"kinds,omitempty"`
	Weight      uint32    `json:"weight,omitempty"`
	ReleasedAt  time.Time `json:"released_at,omitzero"`
}

func encodeRecord(m cluster.Member, releasedAt time.Time) ([]byte, error) {
	b, err := json.Marshal(record{
		ID: m.ID, Incarnation: m.Incarnation, Address: m.Address, Kinds: m.Kinds, Weight: m.Weight,
		ReleasedAt: releasedAt.Round(0).UTC(),
	})
	if err != nil {
		return nil, fmt.Errorf("consul: encode record of %s: %w", m.Key(), err)
	}
	if len(b) > maxRecordSize {
		return nil, fmt.Errorf("%w: %d-byte record of %s", cluster.ErrInvalidMember, len(b), m.Key())
	}
	return b, nil
}

// validateMember checks what the KV layout needs beyond
// cluster.ValidateMember: valid UTF-8 (JSON would silently replace invalid
// bytes and the record would no longer match its key).
func validateMember(m cluster.Member) error {
	if err := cluster.ValidateMember(m); err != nil {
		return err
	}
	ok := utf8.ValidString(m.ID) && utf8.ValidString(m.Address)
	for _, k := range m.Kinds {
		ok = ok && utf8.ValidString(k)
	}
	if !ok {
		return fmt.Errorf("%w: %s: ID, address and kinds must be valid UTF-8", cluster.ErrInvalidMember, m.Key())
	}
	return nil
}

// decodeRecord parses the value stored at key (relative to the members/ or
// released/ prefix, i.e. "<escaped ID>/<incarnation>"), checks that the key
// is in the form keyspace writes and that the value names the same
// incarnation. Errors wrap ErrBadRecord.
func decodeRecord(rel string, value []byte) (cluster.Member, time.Time, error) {
	if len(value) > maxRecordSize {
		return cluster.Member{}, time.Time{}, fmt.Errorf("%w: %d-byte value at %q", ErrBadRecord, len(value), rel)
	}
	escID, incText, ok := strings.Cut(rel, "/")
	if !ok || strings.Contains(incText, "/") {
		return cluster.Member{}, time.Time{}, fmt.Errorf("%w: key %q is not <id>/<incarnation>", ErrBadRecord, rel)
	}
	id, err := url.PathUnescape(escID)
	if err != nil {
		return cluster.Member{}, time.Time{}, fmt.Errorf("%w: key %q: %v", ErrBadRecord, rel, err)
	}
	inc, err := strconv.ParseUint(incText, 10, 64)
	if err != nil {
		return cluster.Member{}, time.Time{}, fmt.Errorf("%w: key %q: incarnation: %v", ErrBadRecord, rel, err)
	}
	// Only the form keyspace writes is a record. Other spellings of the same
	// member ("%61/1" or "a/01" for a#1) decode to it as well: a second
	// record of a live member, or one no Join ever checks or takes
	// (TestConsulNonCanonicalKeysAreBadRecords).
	if canon := recordPath(id, inc); rel != canon {
		return cluster.Member{}, time.Time{}, fmt.Errorf("%w: key %q is not in canonical form (%q)", ErrBadRecord, rel, canon)
	}
	var r record
	if err := json.Unmarshal(value, &r); err != nil {
		return cluster.Member{}, time.Time{}, fmt.Errorf("%w: key %q: %v", ErrBadRecord, rel, err)
	}
	if r.ID == "" || r.ID != id || r.Incarnation != inc {
		return cluster.Member{}, time.Time{}, fmt.Errorf("%w: key %q holds member %q incarnation %d", ErrBadRecord, rel, r.ID, r.Incarnation)
	}
	if len(r.Kinds) == 0 {
		r.Kinds = nil // "kinds":[] and no kinds at all are the same member
	}
	return cluster.Member{ID: r.ID, Incarnation: r.Incarnation, Address: r.Address, Kinds: r.Kinds, Weight: r.Weight}, r.ReleasedAt, nil
}
