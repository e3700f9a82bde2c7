package remotebench

import (
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain turns the re-executed test binary into a peer when PeerEnv is
// set (the benchmarks and TestRemoteWorkloads start it that way), and
// otherwise runs the tests under goleak.
func TestMain(m *testing.M) {
	if impl := os.Getenv(PeerEnv); impl != "" {
		stopProfile, err := startPeerProfile(os.Getenv(PeerProfileEnv), os.Getenv(PeerTraceEnv), os.Getenv(PeerMemProfileEnv))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		// No deadline: the measuring process kills a peer that does not stop.
		err = ServePeer(context.Background(), impl, os.Stdin, os.Stdout)
		if perr := stopProfile(); err == nil {
			err = perr
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"))
}
