package cluster

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

func TestLinkFailuresRecordExplainClear(t *testing.T) {
	var l linkFailures
	refused := &remote.Event{Kind: remote.EventHandshakeRefused, Peer: remote.Peer{Address: "a:1"}, Err: remote.ErrClusterMismatch}
	require.True(t, isLinkEvent(refused))
	l.record(refused)

	timeout := fmt.Errorf("attempt: %w", actor.ErrTimeout)
	got := l.explain("a:1", timeout)
	require.ErrorIs(t, got, actor.ErrTimeout)
	require.ErrorIs(t, got, remote.ErrClusterMismatch)
	require.Same(t, timeout, l.explain("b:1", timeout), "no record: unchanged")
	other := errors.New("not a timeout")
	require.Same(t, other, l.explain("a:1", other), "only a timeout is explained")

	l.record(&remote.Event{Kind: remote.EventConnected, Peer: remote.Peer{Address: "a:1"}})
	require.Same(t, timeout, l.explain("a:1", timeout), "a connection clears the record")

	inbound := &remote.Event{Kind: remote.EventHandshakeRefused, Peer: remote.Peer{Address: "a:1"}, Inbound: true, Err: remote.ErrClusterMismatch}
	require.False(t, isLinkEvent(inbound), "a refused inbound handshake says nothing of this member's own link")
	require.False(t, isLinkEvent(&remote.Event{Kind: remote.EventDialFailed, Err: errors.New("x")}), "no address")
	require.False(t, isLinkEvent(remote.Event{Kind: remote.EventDialFailed}), "published as a pointer")
}

func TestLinkFailuresBounded(t *testing.T) {
	var l linkFailures
	for i := range 3 * maxLinkFailures {
		l.record(&remote.Event{Kind: remote.EventDialFailed, Peer: remote.Peer{Address: fmt.Sprint("h:", i)}, Err: errors.New("refused")})
	}
	require.Len(t, l.m, maxLinkFailures)
}
