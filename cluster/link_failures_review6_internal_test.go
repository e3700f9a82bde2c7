package cluster

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// TestReview6ExplainedTimeoutStaysRetryable: a request attempt that timed
// out is retried (requestFrom re-resolves: the view may have dropped the
// owner this member cannot reach). linkFailures.explain wraps the last
// refused handshake into the timeout so that errors.Is sees it; when that
// refusal was a malformed or oversized handshake frame (whatever answered
// at the address: a process that is not a fraktor node, a peer of
// another version), errors.Is(err, remote.ErrMalformed) or
// remote.ErrFrameTooLarge then holds, and isFatal, meant for a message
// that can never be encoded or decoded, takes the timeout for a fatal
// error: the request fails on its first attempt, without its retries.
func TestReview6ExplainedTimeoutStaysRetryable(t *testing.T) {
	timeout := fmt.Errorf("attempt: %w", actor.ErrTimeout)
	require.False(t, isFatal(timeout), "a bare timeout is retried")
	for _, why := range []error{
		fmt.Errorf("%w: bad magic 0x4854", remote.ErrMalformed),
		fmt.Errorf("%w: 1048577 bytes announced, maximum 1048576", remote.ErrFrameTooLarge),
	} {
		var l linkFailures
		ev := &remote.Event{Kind: remote.EventHandshakeRefused, Peer: remote.Peer{Address: "a:1"}, Err: why}
		require.True(t, isLinkEvent(ev))
		l.record(ev)
		err := l.explain("a:1", timeout)
		require.ErrorIs(t, err, actor.ErrTimeout)
		require.False(t, isFatal(err), "a timeout explained by %q must stay retryable: %v", why, err)
	}
}
