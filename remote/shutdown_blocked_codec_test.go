package remote_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// stuckDecode blocks in its decoding (on the receiving node's reader)
// until stuckRelease is closed.
type stuckDecode struct{ N int }

var stuckEntered, stuckRelease chan struct{}

func (s *stuckDecode) UnmarshalJSON(b []byte) error {
	close(stuckEntered)
	<-stuckRelease
	type plain stuckDecode
	return json.Unmarshal(b, (*plain)(s))
}

// A codec that does not return holds one of remote's goroutines: the
// system's Shutdown still ends at its ctx (plus WriteTimeout once every
// socket is closed), and System.Terminated closes once the codec returns.
// Before, remote's Close waited for that goroutine for good, and with it
// Shutdown.
func TestShutdownBoundedByABlockedCodec(t *testing.T) {
	stuckEntered, stuckRelease = make(chan struct{}), make(chan struct{})
	released := false
	defer func() {
		if !released {
			close(stuckRelease)
		}
	}()
	cfgFor := func() remote.Config {
		cfg := testConfig(t)
		require.NoError(t, remote.RegisterJSON[*stuckDecode](cfg.Serializers, "test.stuckDecode"))
		cfg.WriteTimeout = 200 * time.Millisecond
		return cfg
	}
	sysA, _ := startSystem(t, "a", cfgFor())
	sysB, _ := startSystem(t, "b", cfgFor())
	sink, err := sysB.Root().SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), "sink")
	require.NoError(t, err)
	sysA.Root().Send(remotePID(sink), &stuckDecode{N: 1})
	select {
	case <-stuckEntered:
	case <-time.After(wait):
		t.Fatal("the message was never decoded")
	}

	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		shut <- sysB.Shutdown(ctx)
	}()
	select {
	case err := <-shut:
		require.ErrorIs(t, err, context.DeadlineExceeded)
	case <-time.After(wait):
		t.Fatal("Shutdown held past its ctx by a codec that does not return")
	}
	select {
	case <-sysB.Terminated():
		t.Fatal("terminated while the codec still runs")
	default:
	}
	close(stuckRelease)
	released = true
	select {
	case <-sysB.Terminated():
	case <-time.After(wait):
		t.Fatal("never terminated after the codec returned")
	}
	require.NoError(t, sysB.Shutdown(ctxWait(t)), "a later Shutdown once terminated")
}
