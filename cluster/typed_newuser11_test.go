package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fraktor-go/fraktor/cluster"
	legacypb "github.com/fraktor-go/fraktor/examples/typedschema/legacy"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// requiredLedger serves the proto2 service acme.legacy.ledger_v2, whose
// Entry request and Posted reply have required fields. Its Lookup replies
// without the required sequence, at once or (account "deferred") through
// a DeferredReply; it records where each activation runs.
type requiredLedger struct {
	where *sync.Map // identity ID → member address
}

func (l *requiredLedger) Activated(ctx cluster.GrainContext) error {
	l.where.Store(ctx.Identity().ID, ctx.Self().Address)
	return nil
}

func (l *requiredLedger) PostEntry(_ cluster.GrainContext, req *legacypb.Entry) (*legacypb.Posted, error) {
	return &legacypb.Posted{Sequence: proto.Uint64(uint64(req.GetCents()))}, nil
}

func (l *requiredLedger) Lookup(ctx cluster.GrainContext, req *legacypb.Lookup) (*legacypb.Posted, error) {
	if req.GetAccount() == "deferred" {
		reply := cluster.DeferReply[*legacypb.Posted](ctx)
		done := ctx.System().Root().NewFuture(0)
		done.Complete(nil, nil)
		ctx.ReenterAfter(done, func(any, error) { reply.Reply(&legacypb.Posted{}, nil) })
		return nil, nil
	}
	return &legacypb.Posted{}, nil
}

// TestTypedGrainProto2RequiredFields: a proto2 request or reply whose
// required fields are not set cannot cross the wire. Before, the same call
// behaved by placement: a grain on the caller's member got the request
// (a nil one as an empty Entry) and its caller the incomplete reply, while
// for a grain on another member the request failed with
// remote.ErrSerialize and the reply became a dead letter that did not say
// which field was missing. Now the request fails with remote.ErrSerialize
// naming the field, and the reply reaches the caller as a *GrainError of
// CodeInternal naming it, wherever the grain runs.
func TestTypedGrainProto2RequiredFields(t *testing.T) {
	var where sync.Map
	kind := legacypb.LedgerV2Kind(func(cluster.Identity) legacypb.LedgerV2Grain { return &requiredLedger{where: &where} })
	tc := testkit.NewCluster(t, testkit.Nodes(2), testkit.TCP(), testkit.Kinds(kind),
		testkit.ConfigureCluster(func(c *cluster.Config) {
			c.RequestTimeout, c.AttemptTimeout = 5*time.Second, 5*time.Second
		}))
	placed := map[bool]int{} // grain on the caller's member → calls
	for m := range 2 {
		for i := range 8 {
			id := fmt.Sprint("ledger-", i)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			l := legacypb.NewLedgerV2Client(tc.Node(m), id)
			// A complete request activates the grain: its member is known.
			if p, err := l.PostEntry(ctx, &legacypb.Entry{Account: proto.String("a"), Cents: proto.Int64(7)}); err != nil || p.GetSequence() != 7 {
				t.Fatalf("member %d, %s: PostEntry: %v, %v", m, id, p, err)
			}
			addr, _ := where.Load(id)
			local := addr == tc.Address(m)
			placed[local]++

			for name, req := range map[string]*legacypb.Entry{"nil": nil, "no cents": {Account: proto.String("a")}} {
				_, err := l.PostEntry(ctx, req)
				if !errors.Is(err, remote.ErrSerialize) || !strings.Contains(err.Error(), "required field acme.legacy.Entry.") {
					t.Errorf("member %d, %s (local %v): PostEntry(%s): %v, want remote.ErrSerialize naming the field", m, id, local, name, err)
				}
				_, err = l.PostEntryFuture(req, 0).Result()
				if !errors.Is(err, remote.ErrSerialize) || !strings.Contains(err.Error(), "required field acme.legacy.Entry.") {
					t.Errorf("member %d, %s (local %v): PostEntryFuture(%s): %v, want remote.ErrSerialize naming the field", m, id, local, name, err)
				}
			}
			for _, account := range []string{"now", "deferred"} {
				p, err := l.Lookup(ctx, &legacypb.Lookup{Account: proto.String(account)})
				var ge *cluster.GrainError
				if !errors.As(err, &ge) || ge.Code != cluster.CodeInternal || !strings.Contains(ge.Message, "required field acme.legacy.Posted.sequence not set") {
					t.Errorf("member %d, %s (local %v): Lookup(%s): %v, %v; want a GrainError %s naming the field", m, id, local, account, p, err, cluster.CodeInternal)
				}
			}
			cancel()
		}
	}
	if placed[true] == 0 || placed[false] == 0 {
		t.Fatalf("calls to a grain on the caller's member / on the other: %d / %d, want both", placed[true], placed[false])
	}
}
