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

// A blocking Request still waiting for its grain when the member shuts down
// ends at Shutdown with ErrShuttingDown, as a RequestFuture does: the grain
// is stopped without answering, and the caller's deadline (a minute here,
// as are RequestTimeout and AttemptTimeout) is far off. Before, the Request
// waited out its attempt, a minute after Shutdown returned.
func TestClusterShutdownEndsInFlightRequest(t *testing.T) {
	got := make(chan struct{}, 1)
	silent := cluster.NewKind("silent", actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*Silent); ok {
			got <- struct{}{} // never answered
		}
	}))
	nd := startMemberWith(t, newRegistry(t), func(c *cluster.Config) {
		c.RequestTimeout, c.AttemptTimeout = time.Minute, time.Minute
	}, silent)
	awaitMembers(t, 1, nd)
	errc := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := cluster.Request[*Total](ctx, nd.c, cluster.NewIdentity("silent", "1"), &Silent{})
		errc <- err
	}()
	select {
	case <-got:
	case <-time.After(wait):
		t.Fatal("the request never reached the grain")
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, nd.c.Shutdown(ctx))
	select {
	case err := <-errc:
		if !errors.Is(err, cluster.ErrShuttingDown) || errors.Is(err, cluster.ErrTimeout) {
			t.Fatalf("err %v, want ErrShuttingDown", err)
		}
	case <-time.After(wait):
		t.Fatalf("the request was still waiting %v after Shutdown returned", wait)
	}
}
