package testkit

import (
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/scheduler"
)

// TestCluster.SetClockRate's godoc says "A timer set before the change
// keeps its true deadline", but setRate (what SetClockRate calls) re-arms
// every pending timer for its local deadline at the new rate (commit
// 92d21f2, TestDriftClockRateChangeReArmsTimers): a 10 s timer set at rate
// 1 and followed by SetClockRate(2) fires after 5 s of true time, not 10.
// This test states the godoc's claim and fails on the code: the godoc is
// what is wrong.
func TestSetClockRateGodocTimerKeepsTrueDeadline(t *testing.T) {
	clk := scheduler.NewManualClock(time.Unix(0, 0))
	c := newDriftClock(clk)
	fired := make(chan struct{}, 1)
	c.AfterFunc(10*time.Second, func() { fired <- struct{}{} })
	c.setRate(2)
	clk.Advance(5 * time.Second)
	select {
	case <-fired:
		t.Fatal("the timer set before SetClockRate(2) fired after 5 s of true time: its true deadline (10 s) was not kept, as SetClockRate's godoc says it is")
	default:
	}
}
