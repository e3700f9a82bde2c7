package remote_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// review12: a request that a refused handshake (another SystemName) failed
// with actor.ErrDeadLetter must not be delivered afterwards.
//
// e7064ab fails the requests waiting for an address at the first handshake
// refused for another SystemName, with ErrDeadLetter ("this message was not
// delivered"), but leaves the request's envelope in the endpoint's queue.
// When the node at that address is fixed (restarted with the right
// SystemName) before GiveUpAfter, the endpoint's redial succeeds and the
// queued request is written: the target handles a request whose caller
// was told it was a dead letter. A caller that reads ErrDeadLetter as "not
// delivered, safe to send again" (a cluster request retries after a dead
// letter, cluster/context.go requestFrom) makes the target handle it twice.
// What should hold: a request failed as a dead letter is not delivered
// later (drop the failed requests' envelopes from the queue, or fail them
// only once they are dropped), or the error must not claim a dead letter.
func TestReview12RequestFailedAtRefusalIsNotDeliveredLater(t *testing.T) {
	cfgA := testConfig(t)
	cfgA.SystemName = "alpha"
	cfgA.GiveUpAfter = 10 * time.Minute
	sysA, _ := startSystem(t, "alpha", cfgA)

	cfgB := testConfig(t)
	cfgB.SystemName = "beta" // misconfigured: another system
	sysB, rB := startSystem(t, "beta", cfgB)
	rec, err := sysB.Root().SpawnNamed(echoProps("b"), "rec")
	require.NoError(t, err)
	target := remotePID(rec)

	// Before e7064ab the request ended in ErrTimeout at its deadline (2 s
	// here): a timeout says nothing of delivery, and then the request
	// may reach the fixed node. A dead letter says it did not.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = actor.Request[*EchoReply](ctx, sysA.Root(), target, &Echo{Text: "request"})
	require.Error(t, err)
	deadLetter := errors.Is(err, actor.ErrDeadLetter)
	if deadLetter {
		require.ErrorIs(t, err, remote.ErrClusterMismatch)
	}

	// The operator fixes the node: it comes back at the same address with
	// the right SystemName.
	addr := rB.Address()
	crash(t, rB)
	require.NoError(t, sysB.Shutdown(ctxWait(t)))
	cfgB2 := testConfig(t)
	cfgB2.SystemName = "alpha"
	cfgB2.ListenAddress = addr
	sysB2, rB2 := startSystem(t, "beta-fixed", cfgB2)
	require.Equal(t, addr, rB2.Address())
	got := make(chan string, 16)
	_, err = sysB2.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*Echo); ok {
			got <- m.Text
			c.Respond(&EchoReply{Text: m.Text, By: "b2"})
		}
	}), "rec")
	require.NoError(t, err)

	// A marker sent after the failure: envelopes to one address are
	// written in Send order, so whatever was still queued before it
	// arrives first.
	sysA.Root().Send(target, &Echo{Text: "marker"})
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case first := <-got:
		if deadLetter {
			require.Equal(t, "marker", first,
				"the request its caller was told was a dead letter (%v) was delivered after all", err)
		}
	case <-timer.C:
		t.Fatal("nothing reached the fixed node")
	}
}
