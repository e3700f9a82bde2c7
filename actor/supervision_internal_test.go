package actor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// restartCounter is a Supervisor that counts restarts and stops.
type restartCounter struct {
	restarts, stops int
	now             time.Time
}

func (*restartCounter) Children() []*PID                            { return nil }
func (*restartCounter) ResumeChildren(...*PID)                      {}
func (r *restartCounter) RestartChildren(...*PID)                   { r.restarts++ }
func (*restartCounter) RestartChildrenAfter(time.Duration, ...*PID) {}
func (r *restartCounter) StopChildren(...*PID)                      { r.stops++ }
func (*restartCounter) Escalate(Failure)                            {}
func (r *restartCounter) Now() time.Time                            { return r.now }

// A OneForOne without a restart limit keeps no restart times: with no
// window to prune them by, a crash-looping child under it grew its
// RestartStats by one time per restart for ever.
func TestOneForOneUnlimitedKeepsNoRestartTimes(t *testing.T) {
	sup := &restartCounter{now: time.Unix(0, 0)}
	stats := &RestartStats{}
	s := OneForOne(-1, 0, nil)
	for range 1000 {
		sup.now = sup.now.Add(time.Millisecond)
		s.HandleFailure(sup, Failure{Child: &PID{ID: "c"}, Stats: stats})
	}
	require.Equal(t, 1000, sup.restarts)
	require.Zero(t, sup.stops)
	require.Len(t, stats.times, 0)

	// With a limit the times are kept, and the limit holds.
	limited := OneForOne(3, 0, nil)
	sup2 := &restartCounter{now: time.Unix(0, 0)}
	stats2 := &RestartStats{}
	for range 5 {
		limited.HandleFailure(sup2, Failure{Child: &PID{ID: "c"}, Stats: stats2})
	}
	require.Equal(t, 3, sup2.restarts)
	require.Equal(t, 2, sup2.stops)
}
