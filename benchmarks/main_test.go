package benchmarks

import (
	"testing"

	"go.uber.org/goleak"
)

// protoactor-go's dead-letter throttle starts a goroutine that outlives its
// actor system for up to one throttle period (actor/throttler.go): a defect
// of the peer, not of this suite or of fraktor-go, so it alone is ignored.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"))
}
