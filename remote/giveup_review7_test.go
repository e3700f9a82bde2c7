package remote_test

import (
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// garbageListener is a TCP server on loopback that is no fraktor node (an
// HTTP server on a port a crashed member had): it answers every
// connection with an HTTP error and closes it. Its goroutines end when
// the test does.
func garbageListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"))
			_ = c.Close()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
	})
	return ln.Addr().String()
}

// A request to an address where something that is not a fraktor node
// answers fails at the give-up with ErrDeadLetter and ErrPeerUnreachable,
// and says why in its text; but it must not match the sentinels that
// say a message itself can never be delivered (ErrFrameTooLarge,
// ErrMalformed): callers take those as fatal for the message (cluster's
// isFatal does not retry them), while the request was lost only because
// the link was down. Since 20d98f5 the give-up wraps the last dial's
// error with %w, and the handshake's ErrFrameTooLarge/ErrMalformed leaks
// into every request and spawn failed at that address.
func TestReview7GiveUpKeepsMessageSentinelsOut(t *testing.T) {
	addr := garbageListener(t)
	cfg := testConfig(t)
	cfg.GiveUpAfter = 300 * time.Millisecond
	sys, _ := startSystem(t, "a", cfg)
	ends := events[*remote.EndpointTerminated](t, sys)

	f := sys.Root().RequestFuture(actor.NewPID(addr, "echo"), &Echo{Text: "hello?"}, 10*time.Second)
	ev := waitFor(t, ends, "endpoint terminated", nil)
	require.ErrorIs(t, ev.Reason, remote.ErrPeerUnreachable)

	_, err := f.Result()
	require.ErrorIs(t, err, actor.ErrDeadLetter)
	require.ErrorIs(t, err, remote.ErrPeerUnreachable)
	for _, s := range []error{remote.ErrFrameTooLarge, remote.ErrMalformed, remote.ErrUnknownType, remote.ErrSerialize, remote.ErrCodecPanic} {
		require.False(t, errors.Is(err, s), "a request lost to a link that never came up matches %v: %v", s, err)
	}
}

// A peer that refuses this node's handshake because this node is on the
// peer's block list (RejectBlocked): since 20d98f5 the give-up wraps that
// refusal, so the request fails with errors.Is(err, remote.ErrBlocked),
// whose doc says "the peer is on the BlockList" (this node's), and the
// cluster turns it into cluster.ErrBlocked, "the owner is on the block
// list" (cluster/context.go). Neither holds: nothing is on this node's
// block list; this node is on the peer's. The request's error must say
// why in its text and stay out of ErrBlocked.
func TestReview7GiveUpAfterPeerBlockedUsIsNotErrBlocked(t *testing.T) {
	cfgA := testConfig(t)
	cfgA.GiveUpAfter = 300 * time.Millisecond
	sysA, ra := startSystem(t, "a", cfgA)
	sysB, rb := startSystem(t, "b", testConfig(t))
	echo, err := sysB.Root().SpawnNamed(echoProps("b"), "echo")
	require.NoError(t, err)
	rb.BlockList().Block(ra.Address())
	require.False(t, ra.BlockList().IsBlocked(rb.Address()))

	f := sysA.Root().RequestFuture(remotePID(echo), &Echo{Text: "hello?"}, 10*time.Second)
	_, err = f.Result()
	require.ErrorIs(t, err, remote.ErrPeerUnreachable)
	require.False(t, errors.Is(err, remote.ErrBlocked),
		"a request to a peer that blocked this node reads as if this node blocked the peer: %v", err)
}
