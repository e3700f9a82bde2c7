package typedschema_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/fraktor-go/fraktor/cluster"
	commonv1 "github.com/fraktor-go/fraktor/examples/typedschema/common/v1"
	legacypb "github.com/fraktor-go/fraktor/examples/typedschema/legacy"
	ordersv1 "github.com/fraktor-go/fraktor/examples/typedschema/orders/v1"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// TestSchemaOrdersInTestkit runs one Orders grain on the deterministic
// system: its methods named Init, Send, Receive, Stop, Kind and Error;
// its errors and its panic; Check's call to another order, answered by a
// stub; and the idle passivation, after which the order is gone.
func TestSchemaOrdersInTestkit(t *testing.T) {
	g := testkit.NewGrain(t, ordersv1.OrdersKind(newOrder), cluster.NewIdentity(ordersv1.OrdersKindName, "o1"))
	o, err := testkit.CallGrain[*ordersv1.Order](g, &ordersv1.CreateOrder{Items: []*ordersv1.LineItem{{Sku: "a"}}})
	if err != nil || o.GetStatus() != ordersv1.Status_STATUS_OPEN {
		t.Fatalf("Init: %v, %v", o, err)
	}
	if _, err := testkit.CallGrain[*ordersv1.Order](g, &ordersv1.CreateOrder{}); !errors.Is(err, errAlreadyExists) {
		t.Fatalf("second Init: %v", err)
	}
	if o, err = testkit.CallGrain[*ordersv1.Order](g, &ordersv1.AddItem{Item: &ordersv1.LineItem{Sku: "b"}}); err != nil || len(o.GetItemsBySku()) != 2 {
		t.Fatalf("Send: %v, %v", o, err)
	}
	r, err := testkit.CallGrain[*commonv1.Receipt](g, &ordersv1.PayOrder{Payment: &ordersv1.PayOrder_Card{Card: &ordersv1.Order_Card{Last4: "4242"}}})
	if err != nil || r.GetLabels()["status"] != "STATUS_PAID" {
		t.Fatalf("Receive: %v, %v", r, err)
	}

	g.Stub(ordersv1.OrdersKindName, func(id cluster.Identity, msg any) (any, error) {
		if _, ok := msg.(*ordersv1.KindQuery); !ok || id.ID != "o2" {
			return nil, cluster.NewGrainError("unexpected", "%v %T", id, msg)
		}
		return wrapperspb.String("o2: STATUS_SHIPPED"), nil
	})
	s, err := testkit.CallGrain[*wrapperspb.StringValue](g, &ordersv1.StartCheck{OtherOrder: "o2"})
	if err != nil || s.GetValue() != "o1 sees o2: STATUS_SHIPPED" {
		t.Fatalf("Check: %v, %v", s, err)
	}
	g.Stub(ordersv1.OrdersKindName, func(cluster.Identity, any) (any, error) {
		return nil, cluster.NewGrainError("not_found", "no such order")
	})
	if _, err := testkit.CallGrain[*wrapperspb.StringValue](g, &ordersv1.StartCheck{OtherOrder: "o3"}); !errors.Is(err, &cluster.GrainError{Code: "not_found"}) {
		t.Fatalf("Check of a missing order: %v", err)
	}

	if e, err := testkit.CallGrain[*emptypb.Empty](g, (*ordersv1.StopOrder)(nil)); err != nil || e == nil {
		t.Fatalf("Stop(nil): %v, %v", e, err)
	}
	if k, err := testkit.CallGrain[*wrapperspb.StringValue](g, &ordersv1.KindQuery{}); err != nil || k.GetValue() != "STATUS_CANCELLED" {
		t.Fatalf("Kind: %v, %v", k, err)
	}
	var ge *cluster.GrainError
	if _, err := testkit.CallGrain[*emptypb.Empty](g, &ordersv1.Fail{Panic: true}); !errors.As(err, &ge) || ge.Code != cluster.CodeInternal {
		t.Fatalf("panic: %v", err)
	}
	if o, err = testkit.CallGrain[*ordersv1.Order](g, &emptypb.Empty{}); err != nil || o.GetStatus() != ordersv1.Status_STATUS_UNSPECIFIED {
		t.Fatalf("Identity after the panic: %v, %v (want the restarted grain)", o, err)
	}
	if _, err := testkit.CallGrain[*ordersv1.Order](g, &ordersv1.CreateOrder{}); err != nil {
		t.Fatal(err)
	}
	g.Sys.Advance(time.Hour) // the default idle timeout: passivated
	if o, err = testkit.CallGrain[*ordersv1.Order](g, &emptypb.Empty{}); err != nil || o.GetStatus() != ordersv1.Status_STATUS_UNSPECIFIED {
		t.Fatalf("Identity after the idle timeout: %v, %v (want a new activation)", o, err)
	}
}

// TestSchemaAdminInTestkit runs the admin grain (a service of a file
// without messages): Reopen's Future call to an order, answered through a
// probe standing in for the Orders kind.
func TestSchemaAdminInTestkit(t *testing.T) {
	g := testkit.NewGrain(t, ordersv1.AdminKind(func(cluster.Identity) ordersv1.AdminGrain { return &admin{} }),
		cluster.NewIdentity(ordersv1.AdminKindName, "back-office"))
	orders := g.StubProbe(ordersv1.OrdersKindName)
	g.Send(wrapperspb.String("o9")) // Reopen, its reply deferred
	call, _ := testkit.ExpectGrainCall[*emptypb.Empty](orders, 0)
	if call.Identity != cluster.NewIdentity(ordersv1.OrdersKindName, "o9") {
		t.Fatalf("Reopen called %v", call.Identity)
	}
	call.Reply(&ordersv1.Order{Id: "o9", Status: ordersv1.Status_STATUS_OPEN})
	g.Sys.RunUntilIdle()
	o, err := testkit.ExpectGrainReply[*ordersv1.Order](g.Probe, 0)
	if err != nil || o.GetId() != "o9" || o.GetStatus() != ordersv1.Status_STATUS_OPEN {
		t.Fatalf("Reopen: %v, %v", o, err)
	}
	if _, err := testkit.CallGrain[*emptypb.Empty](g, (*emptypb.Empty)(nil)); err != nil {
		t.Fatalf("Ping(nil): %v", err)
	}
	m, err := testkit.CallGrain[*commonv1.Money](g, &commonv1.Receipt{Labels: map[string]string{"k": "v"}})
	if err != nil || m.GetMinorUnits() != 1 {
		t.Fatalf("AuditReceipt: %v, %v", m, err)
	}
}

// TestSchemaLedgerInTestkit: the proto2 grain's reply without its required
// field is a GrainError of CodeInternal in the testkit too.
func TestSchemaLedgerInTestkit(t *testing.T) {
	g := testkit.NewGrain(t, legacypb.LedgerV2Kind(func(cluster.Identity) legacypb.LedgerV2Grain { return &ledger{} }),
		cluster.NewIdentity(legacypb.LedgerV2KindName, "l"))
	p, err := testkit.CallGrain[*legacypb.Posted](g, &legacypb.Entry{Account: proto.String("a"), Cents: proto.Int64(3)})
	if err != nil || p.GetSequence() != 1 || p.GetLine()[0].GetBalance() != 3 {
		t.Fatalf("PostEntry: %v, %v", p, err)
	}
	var ge *cluster.GrainError
	_, err = testkit.CallGrain[*legacypb.Posted](g, &legacypb.Lookup{Account: proto.String("nobody")})
	if !errors.As(err, &ge) || ge.Code != cluster.CodeInternal || !strings.Contains(ge.Message, "acme.legacy.Posted.sequence") {
		t.Fatalf("Lookup of an unknown account: %v", err)
	}
}

// TestCallGrainRefusesIncompleteProto2Request: a proto2 request with a
// required field unset (a nil one, an Entry without its cents) is refused
// with remote.ErrSerialize naming the field, as cluster.Call refuses it
// wherever the grain runs; before, the testkit handed it to the grain.
func TestCallGrainRefusesIncompleteProto2Request(t *testing.T) {
	g := testkit.NewGrain(t, legacypb.LedgerV2Kind(func(cluster.Identity) legacypb.LedgerV2Grain { return &ledger{} }),
		cluster.NewIdentity(legacypb.LedgerV2KindName, "l"))
	for _, req := range []*legacypb.Entry{{Account: proto.String("a")}, nil} {
		_, err := testkit.CallGrain[*legacypb.Posted](g, req)
		if !errors.Is(err, remote.ErrSerialize) || !strings.Contains(err.Error(), "acme.legacy.Entry") {
			t.Fatalf("CallGrain(%v): %v, want remote.ErrSerialize naming the message", req, err)
		}
	}
}
