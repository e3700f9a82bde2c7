package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
)

// loadingAccount blocks in Activated until the test opens gate, as a
// grain loading its state with blocking I/O does.
type loadingAccount struct {
	testAccount
	entered chan<- struct{}
	gate    <-chan struct{}
}

func (a *loadingAccount) Activated(ctx cluster.GrainContext) error {
	a.entered <- struct{}{}
	<-a.gate
	return a.testAccount.Activated(ctx)
}

// A kind given WithBlocking runs its activations on the blocking pool: a
// typed grain blocked in Activated does not hold the member's only shared
// worker, so another grain (on the shared pool) answers meanwhile. Untyped
// kinds get the same from props built with actor.WithBlocking. Without the
// option the blocked grain held the worker and the other grain's call
// timed out.
func TestKindWithBlockingRunsOnBlockingPool(t *testing.T) {
	for _, tc := range []struct {
		name  string
		kind  func(entered chan<- struct{}, gate <-chan struct{}) cluster.Kind
		call  func(ctx context.Context, c *cluster.Cluster) error
		ident string
	}{
		{"typed", func(entered chan<- struct{}, gate <-chan struct{}) cluster.Kind {
			acts := counters("loading")
			return shopv1.AccountKind(func(id cluster.Identity) shopv1.AccountGrain {
				return &loadingAccount{testAccount: testAccount{id: id, activations: acts[id.ID]}, entered: entered, gate: gate}
			}, cluster.WithBlocking())
		}, func(ctx context.Context, c *cluster.Cluster) error {
			_, err := shopv1.NewAccountClient(c, "loading").GetBalance(ctx, &emptypb.Empty{})
			return err
		}, "loading"},
		{"untyped", func(entered chan<- struct{}, gate <-chan struct{}) cluster.Kind {
			return cluster.NewKind("loader", actor.PropsFromFunc(func(c actor.Context) {
				switch c.Message().(type) {
				case *actor.Started:
					entered <- struct{}{}
					<-gate
				case *Get:
					c.Respond(&Total{})
				}
			}, actor.WithBlocking()))
		}, func(ctx context.Context, c *cluster.Cluster) error {
			_, err := cluster.Request[*Total](ctx, c, cluster.NewIdentity("loader", "x"), &Get{})
			return err
		}, "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entered, gate := make(chan struct{}, 1), make(chan struct{})
			opened := false
			defer func() {
				if !opened {
					close(gate) // let the grain go, so the member can stop
				}
			}()
			reg := newRegistry(t)
			n := startMemberFull(t, reg, func(c *cluster.Config) {
				c.RequestTimeout, c.AttemptTimeout, c.ActivationTimeout = 30*time.Second, 30*time.Second, 30*time.Second
			}, func(c *actor.SystemConfig) { c.Workers = 1 }, tc.kind(entered, gate), counterKind())
			awaitMembers(t, 1, n)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- tc.call(ctx, n.c) }()
			select {
			case <-entered: // the grain blocks its invocation now
			case <-ctx.Done():
				t.Fatal("never activated")
			}
			// The shared pool's one worker is free: a counter answers.
			_, err := cluster.Request[*Total](ctx, n.c, cluster.NewIdentity("counter", "c"), &Add{N: 1})
			require.NoError(t, err, "a grain on the shared pool, while %s blocks", tc.ident)
			close(gate)
			opened = true
			require.NoError(t, <-done)
		})
	}
}
