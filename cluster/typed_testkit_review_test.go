package cluster_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/fraktor-go/fraktor/cluster"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
	"github.com/fraktor-go/fraktor/testkit"
)

// failsSecondActivation is a typed grain whose Activated fails the second
// time it runs for its identity: after the restart that a panic in Crash
// causes.
type failsSecondActivation struct {
	testAccount
	runs *atomic.Int32
}

func (a *failsSecondActivation) Activated(cluster.GrainContext) error {
	if a.runs.Add(1) == 2 {
		return errors.New("cannot reload")
	}
	return nil
}

// TestCallGrainReplyBeforeFailedRestart: under testkit.NewGrain, a call
// whose method panics gets its CodeInternal reply, as in the cluster, even
// when the restart that follows fails its Activated; the next call reaches
// a new activation and gets its own reply.
func TestCallGrainReplyBeforeFailedRestart(t *testing.T) {
	runs := new(atomic.Int32)
	kind := shopv1.AccountKind(func(id cluster.Identity) shopv1.AccountGrain {
		return &failsSecondActivation{testAccount: testAccount{id: id, activations: new(atomic.Int32)}, runs: runs}
	})
	g := testkit.NewGrain(t, kind, cluster.NewIdentity(shopv1.AccountKindName, "reload"))
	_, err := testkit.CallGrain[*shopv1.Balance](g, &shopv1.CrashRequest{})
	if !errors.Is(err, &cluster.GrainError{Code: cluster.CodeInternal}) {
		t.Fatalf("Crash: %v, want the method's CodeInternal (the cluster's caller gets it before the restart)", err)
	}
	b, err := testkit.CallGrain[*shopv1.Balance](g, &emptypb.Empty{})
	if err != nil || b == nil {
		t.Fatalf("GetBalance after the failed restart: %v, %v; want a new activation's balance", b, err)
	}
	if n := runs.Load(); n != 3 {
		t.Fatalf("Activated ran %d times, want 3 (first, failed restart, new activation)", n)
	}
}
