package cluster_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/cluster/internal/clusterpb"
	commonv1 "github.com/fraktor-go/fraktor/internal/testpb/common/v1"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
)

// crashKind is a grain that panics on PanicKind and answers Get.
func crashKind() cluster.Kind {
	return cluster.NewKind("crashy", actor.PropsFromProducer(func() actor.Actor {
		return actor.ReceiveFunc(func(c actor.Context) {
			switch c.Message().(type) {
			case *PanicKind:
				panic("crashy: simulated bug")
			case *Get:
				c.Respond(&Total{})
			}
		})
	}))
}

// A grain that panics after Started is restarted and keeps its activation
// (docs/cluster.md, "Activation failures"): the restart delivers Started
// again, which must not count as another activation. ActivationStarted is
// published once per activation (an observer pairing it with
// ActivationTerminated would otherwise see an activation that never ends)
// and fraktor.cluster.activations counts it once; the virtual-actor gauge,
// raised for every report, read one more per restart for good.
func TestClusterGrainRestartIsNotAnotherActivation(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	nd := startMemberFull(t, newRegistry(t), func(*cluster.Config) {}, withMeter(reader), crashKind())
	awaitMembers(t, 1, nd)
	id := cluster.NewIdentity("crashy", "1")
	var started atomic.Int32
	// Counted in the predicate, which runs on the publisher's goroutine:
	// the count is complete once the placement actor has published.
	nd.sys.EventStream().SubscribeWithPredicate(func(any) {}, func(e any) bool {
		if ev, ok := e.(*cluster.ActivationStarted); ok && ev.Identity == id {
			started.Add(1)
		}
		return false
	})
	ctx := ctxWait(t)
	_, err := cluster.Request[*Total](ctx, nd.c, id, &Get{})
	require.NoError(t, err)
	nd.c.Send(id, &PanicKind{}) // the warm route: queued before the Get below
	_, err = cluster.Request[*Total](ctx, nd.c, id, &Get{})
	require.NoError(t, err, "the restarted grain answers")
	// The restarted grain reported its Started to the placement actor
	// before it handled the Get; the placement actor answers in order, so
	// once it answered this request it has handled that report.
	_, err = nd.sys.Root().RequestFuture(actor.NewPID(nd.sys.Address(), "$placement"),
		&clusterpb.ActivationRequest{Kind: "other", Id: "x"}, 0).ResultContext(ctx)
	require.NoError(t, err)
	require.Equal(t, int32(1), started.Load(), "ActivationStarted for one activation")
	require.Equal(t, 1, nd.c.ActiveCount())
	ms := collect(t, reader)
	g, ok := ms["fraktor.cluster.virtual_actors"].Data.(metricdata.Gauge[int64])
	require.True(t, ok)
	require.Len(t, g.DataPoints, 1)
	require.EqualValues(t, 1, g.DataPoints[0].Value, "virtual-actor gauge")
	act, ok := ms["fraktor.cluster.activations"].Data.(metricdata.Sum[int64])
	require.True(t, ok)
	require.EqualValues(t, 1, act.DataPoints[0].Value, "activations counter")
}

// flakyAccount is testAccount whose Activated fails on its second call
// only: the activation's restart after a panic cannot load its state.
type flakyAccount struct {
	*testAccount
	calls *atomic.Int32
}

func (a *flakyAccount) Activated(ctx cluster.GrainContext) error {
	if a.calls.Add(1) == 2 {
		return errors.New("account: cannot load")
	}
	return a.testAccount.Activated(ctx)
}

// A typed grain's Activated error fails the activation and the grain is
// stopped (GrainActivated). That holds for a restart too: a grain whose
// Activated fails when a panic restarted it must stop, so the next call
// activates it afresh. Left running, it answered every call with
// "activation failed" for as long as calls kept it from idling out.
func TestTypedGrainActivatedErrorAfterRestartStopsGrain(t *testing.T) {
	var calls atomic.Int32
	acts := counters("flaky")
	kind := shopv1.AccountKind(func(id cluster.Identity) shopv1.AccountGrain {
		return &flakyAccount{testAccount: &testAccount{id: id, activations: acts[id.ID]}, calls: &calls}
	})
	tc := newTypedCluster(t, kind)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	terminated := make(chan struct{}, 1)
	actor.Subscribe(tc.Node(0).System().EventStream(), func(ev *cluster.ActivationTerminated) {
		if ev.Identity.ID == "flaky" {
			select {
			case terminated <- struct{}{}:
			default:
			}
		}
	})
	c := shopv1.NewAccountClient(tc.Node(0), "flaky")
	_, err := c.Deposit(ctx, &shopv1.DepositRequest{Amount: &commonv1.Money{Units: 5}})
	require.NoError(t, err)
	_, err = c.Crash(ctx, &shopv1.CrashRequest{}) // restarted; Activated fails
	var ge *cluster.GrainError
	require.ErrorAs(t, err, &ge)
	select {
	case <-terminated:
	case <-ctx.Done():
		t.Fatal("the grain whose Activated failed after a restart was never stopped")
	}
	b, err := c.GetBalance(ctx, &emptypb.Empty{})
	require.NoError(t, err, "a new activation serves the call")
	require.Equal(t, int32(2), b.GetActivations())
	require.Equal(t, int32(3), calls.Load())
}
