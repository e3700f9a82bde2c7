package testkit_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// After a run that found the system busy, the probes' waits take what has
// arrived without running the system, until the test runs it: a Step
// counts (ManualBusyLimit). An actor that keeps itself busy for a little
// more than the limit, then tells the probe: once the test steps the
// system, the probe's wait runs it on and finds the message. Before, the
// executor still reported busy after the Step and the wait found nothing.
func TestManualProbeRunsSystemAfterStep(t *testing.T) {
	rec := newRecorder(t)
	ms := testkit.NewManualSystem(rec, func(c *actor.SystemConfig) { c.Throughput = 1 })
	p := testkit.NewManualProbe(rec, ms)
	const turns = testkit.ManualBusyLimit + 10
	n := 0
	pid := ms.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(string); ok {
			if n++; n < turns {
				c.Send(c.Self(), "again")
				return
			}
			c.Send(p.PID(), "done")
		}
	}))
	ms.Root().Send(pid, "again")
	ms.RunUntilIdle()
	require.True(t, ms.Exec.Busy())
	require.Len(t, rec.Errors(), 1)
	assert.Contains(t, rec.Errors()[0], "still busy")

	require.True(t, ms.Step())
	p.ExpectMsgEqual("done", 0)
	assert.Empty(t, rec.Fatals())
	assert.Equal(t, turns, n)
}
