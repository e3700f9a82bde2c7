package consul

import (
	"strings"
	"testing"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/internal/testconsul"
)

// A member ID (or address) longer than the 512 bytes Consul allows in a
// service meta value is cut for the meta. The cut is on a rune boundary:
// cut inside a multi-byte rune, the JSON encoder replaced the broken bytes
// with U+FFFD (3 bytes), the value grew past 512 bytes and the agent
// refused the registration, so such a member could not join.
func TestConsulLongMultibyteIDJoins(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	p := newProvider(t, cfg)
	for i, id := range []string{"a" + strings.Repeat("é", 300), strings.Repeat("日", 200)} {
		m := testMember(id, uint64(i+1))
		m.Address = "a" + strings.Repeat("é", 300)
		ms := joinMember(t, p, m)
		waitView(t, ms, "joined", func(top cluster.Topology) bool { return hasMemberKey(top, m.Key()) })
	}
}
