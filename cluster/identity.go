package cluster

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Identity names a grain: its Kind (the type of virtual actor, registered by
// the members that host it) and its ID within that kind. Identity is a small
// comparable value; use it directly as a map key.
type Identity struct {
	Kind string
	ID   string
}

// NewIdentity returns the identity of grain id of kind.
func NewIdentity(kind, id string) Identity { return Identity{Kind: kind, ID: id} }

// Validate reports ErrInvalidIdentity when Kind or ID is empty or not valid
// UTF-8. The wire messages carry them as protobuf strings, which must be
// UTF-8: such an identity could be activated by callers on its owner only,
// while every other member's activation request failed to encode.
func (i Identity) Validate() error {
	if i.Kind == "" || i.ID == "" {
		return fmt.Errorf("%w: kind %q, id %q: both must be non-empty", ErrInvalidIdentity, i.Kind, i.ID)
	}
	if !utf8.ValidString(i.Kind) || !utf8.ValidString(i.ID) {
		return fmt.Errorf("%w: kind %q, id %q: both must be valid UTF-8", ErrInvalidIdentity, i.Kind, i.ID)
	}
	return nil
}

// String returns the stable, unambiguous text form "kind/id": the kind with
// every '%' written as "%25" and every '/' as "%2F", a '/', then the ID
// verbatim. Because the escaped kind never contains '/', the first '/'
// always ends the kind, so two different identities never share a string
// (joining kind and ID with a bare separator does collide:
// {"a.b","c"} and {"a","b.c"}). Kinds without '%' and '/' appear unchanged:
// NewIdentity("account", "42").String() == "account/42". ParseIdentity is
// the inverse.
func (i Identity) String() string {
	if !strings.ContainsAny(i.Kind, "%/") {
		return i.Kind + "/" + i.ID
	}
	var b strings.Builder
	b.Grow(len(i.Kind) + len(i.ID) + 8)
	for j := 0; j < len(i.Kind); j++ {
		switch c := i.Kind[j]; c {
		case '%':
			b.WriteString("%25")
		case '/':
			b.WriteString("%2F")
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('/')
	b.WriteString(i.ID)
	return b.String()
}

// ParseIdentity is the inverse of Identity.String. It returns
// ErrInvalidIdentity when s has no '/', when the kind part holds a '%' that
// is not "%25" or "%2F", or when kind or ID is empty.
func ParseIdentity(s string) (Identity, error) {
	k, id, ok := strings.Cut(s, "/")
	if !ok {
		return Identity{}, fmt.Errorf("%w: %q has no '/'", ErrInvalidIdentity, s)
	}
	kind, err := unescapeKind(k)
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %q: %s", ErrInvalidIdentity, s, err)
	}
	out := Identity{Kind: kind, ID: id}
	if err := out.Validate(); err != nil {
		return Identity{}, err
	}
	return out, nil
}

func unescapeKind(k string) (string, error) {
	if !strings.Contains(k, "%") {
		return k, nil
	}
	var b strings.Builder
	b.Grow(len(k))
	for j := 0; j < len(k); j++ {
		c := k[j]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if j+3 > len(k) {
			return "", fmt.Errorf("truncated escape at byte %d", j)
		}
		switch k[j+1 : j+3] {
		case "25":
			b.WriteByte('%')
		case "2F":
			b.WriteByte('/')
		default:
			return "", fmt.Errorf("bad escape %q at byte %d", k[j:j+3], j)
		}
		j += 2
	}
	return b.String(), nil
}
