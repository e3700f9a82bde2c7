package cluster

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// recordReport keeps "only keys of the view: a report is kept no longer
// than the view's size, whatever the sender put in it". A ViewAck that
// names one member of the view many times passes the filter whole: a
// single frame (up to remote's MaxFrameSize) is kept as the sender's
// report, and votedUnreachable scans all of it for every pair of members
// at every tick until the next report replaces it.
func TestReview14HostileReportIsBoundedByTheView(t *testing.T) {
	ms := make([]Member, 5)
	for i := range ms {
		ms[i] = Member{ID: fmt.Sprintf("m%d", i), Incarnation: 1, Address: fmt.Sprintf("10.0.0.%d:1", i)}
	}
	p := &placementActor{
		c:    &Cluster{cfg: Config{TickInterval: time.Second, Reachability: ReachabilityConfig{After: 2 * time.Second}}},
		core: &placementCore{hasView: true, view: Topology{Members: ms}},
	}
	keys := make([]string, 100_000)
	for i := range keys {
		keys[i] = ms[2].Key()
	}
	p.recordReport(ms[1].Key(), keys, time.Unix(1000, 0))
	require.LessOrEqual(t, len(p.reach.reports[ms[1].Key()].keys), len(ms),
		"a report keeps at most one entry per member of the view")
}
