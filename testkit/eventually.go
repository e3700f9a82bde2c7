package testkit

import (
	"fmt"
	"testing"
	"time"
)

// Eventually fails the test unless cond becomes true within timeout
// (0: DefaultTimeout). It checks cond at once and then every millisecond on
// the test goroutine. It is for state that has no event to wait on (a
// counter, a gauge); when there is a message or an event, use a Probe or an
// EventProbe instead. In deterministic mode nothing happens while it waits:
// run the system (RunUntilIdle, Advance) and assert directly.
//
// msgAndArgs, as in testify, is a message or a format and its arguments,
// added to the failure.
func Eventually(t testing.TB, cond func() bool, timeout time.Duration, msgAndArgs ...any) {
	t.Helper()
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if cond() {
		return
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-deadline.C:
			if cond() {
				return
			}
			t.Fatalf("testkit: Eventually: condition not met within %v%s", timeout, formatMsg(msgAndArgs))
			return
		case <-tick.C:
			if cond() {
				return
			}
		}
	}
}

func formatMsg(msgAndArgs []any) string {
	switch {
	case len(msgAndArgs) == 0:
		return ""
	case len(msgAndArgs) == 1:
		return ": " + fmt.Sprint(msgAndArgs[0])
	}
	if format, ok := msgAndArgs[0].(string); ok {
		return ": " + fmt.Sprintf(format, msgAndArgs[1:]...)
	}
	return ": " + fmt.Sprint(msgAndArgs...)
}
