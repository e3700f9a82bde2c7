package cluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// A RequestFuture still waiting when the member shuts down ends at Shutdown
// with ErrShuttingDown, as a request made after it would: its own timeout
// (a minute here) has not passed, so ErrTimeout would misreport it.
func TestClusterShutdownEndsInFlightRequestFuture(t *testing.T) {
	got := make(chan struct{}, 1)
	silent := cluster.NewKind("silent", actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*Silent); ok {
			got <- struct{}{} // never answered
		}
	}))
	nd := startMember(t, newRegistry(t), silent)
	awaitMembers(t, 1, nd)
	fut := nd.c.RequestFuture(cluster.NewIdentity("silent", "1"), &Silent{}, time.Minute)
	select {
	case <-got:
	case <-time.After(wait):
		t.Fatal("the request never reached the grain")
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, nd.c.Shutdown(ctx))
	_, err := fut.Result()
	if !errors.Is(err, cluster.ErrShuttingDown) || errors.Is(err, cluster.ErrTimeout) {
		t.Fatalf("err %v, want ErrShuttingDown", err)
	}
}
