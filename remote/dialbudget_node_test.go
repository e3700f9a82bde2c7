package remote

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/scheduler"
)

// TestLocalSendWakesDeferredFirstDial: an endpoint made by a reply to a
// peer-named address finds the budget (1 dial) spent and waits for its
// backoff slot, on a clock that does not move; a Send of local code to
// that address then makes it dial at once.
func TestLocalSendWakesDeferredFirstDial(t *testing.T) {
	cfg := testConfig()
	cfg.DialBudget = 1
	tr := &countingTransport{refuse: true}
	n, _ := startNode(t, cfg, WithTransport(tr), WithClock(scheduler.NewManualClock(time.Now())))
	const x, y = "127.0.0.1:1001", "127.0.0.1:1002"
	reply := func(addr string) {
		require.NoError(t, n.send(addr, actor.NewPID(addr, "f"), nil, ping(1), sendReply))
	}
	reply(x)
	require.Eventually(t, func() bool { return tr.dials.Load() == 1 }, waitTimeout, time.Millisecond)
	reply(y)
	require.Eventually(t, func() bool { return n.Stats().DialsDeferred == 1 }, waitTimeout, time.Millisecond)
	assert.Equal(t, int64(1), tr.dials.Load())

	require.NoError(t, n.Send(y, Envelope{Target: PIDRef{Address: y, ID: "f"}, Message: ping(2)}))
	require.Eventually(t, func() bool { return tr.dials.Load() == 2 }, waitTimeout, time.Millisecond)
	assert.Equal(t, uint64(1), n.Stats().DialsDeferred)
}
