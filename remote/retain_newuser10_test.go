package remote_test

import (
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// A future answered over the network is not kept by the node once its
// caller dropped it. The inbound target cache (1,024 slots) cached the
// future an answer went to like any other target, so each slot kept the
// last answered future it hashed to, with its answer: up to 1,024 replies
// of any size alive for as long as no later target hashed there (found by
// the soak trial, testkit/soak: completed futures and stopped actors among
// what the heap kept).
func TestNewuser10AnsweredFutureNotKeptByInboundCache(t *testing.T) {
	a, _ := startSystem(t, "a", testConfig(t))
	b, _ := startSystem(t, "b", testConfig(t))
	echo := remotePID(echoOn(t, b, "echo", "b"))

	const n = 8
	var replies [n]weak.Pointer[EchoReply]
	var futures [n]weak.Pointer[actor.Future]
	for i := range n {
		f := a.Root().RequestFuture(echo, &Echo{Text: strings.Repeat("x", 64<<10)}, wait)
		r, err := f.Result()
		require.NoError(t, err)
		replies[i], futures[i] = weak.Make(r.(*EchoReply)), weak.Make(f)
	}
	require.Eventually(t, func() bool {
		runtime.GC()
		for i := range n {
			if replies[i].Value() != nil || futures[i].Value() != nil {
				return false
			}
		}
		return true
	}, 5*time.Second, time.Millisecond, "an answered future (and its 64 KiB reply) is still reachable")
}
