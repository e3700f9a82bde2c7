package cluster

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fraktor-go/fraktor/actor"
)

// The forward count comes from the wire: garbage and negative values count
// as none, a value too large to parse as past the bound.
func TestForwardsOf(t *testing.T) {
	for v, want := range map[string]uint64{
		"": 0, "0": 0, "2": 2, "3": 3, "-1": 0, "-99999999999999999999": 0, "x": 0, " 1": 0,
		"99999999999999999999": maxForwards,
	} {
		h := actor.Header{}
		if v != "" {
			h.Set(ForwardHeader, v)
		}
		assert.Equal(t, want, forwardsOf(h), "%q", v)
	}
	assert.Equal(t, uint64(0), forwardsOf(nil))
}
