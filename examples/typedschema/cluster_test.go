package typedschema_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/fraktor-go/fraktor/cluster"
	commonv1 "github.com/fraktor-go/fraktor/examples/typedschema/common/v1"
	legacypb "github.com/fraktor-go/fraktor/examples/typedschema/legacy"
	ordersv1 "github.com/fraktor-go/fraktor/examples/typedschema/orders/v1"
	type_ "github.com/fraktor-go/fraktor/examples/typedschema/type"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// newCluster starts two members over loopback TCP with the in-memory
// provider, both hosting every service of the schema.
func newCluster(t *testing.T) *testkit.TestCluster {
	t.Helper()
	return testkit.NewCluster(t, testkit.Nodes(2), testkit.TCP(), testkit.Kinds(kinds()...),
		testkit.ConfigureCluster(func(c *cluster.Config) {
			// Long attempts: a method must run once per call here.
			c.RequestTimeout, c.AttemptTimeout = 20*time.Second, 20*time.Second
		}))
}

func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// spread returns n IDs of kind (prefix0, prefix1, ...), n/2 owned by each
// member in member 0's view: each test calls them from both members, so
// its calls reach a grain on the caller's member and one on the other.
func spread(t *testing.T, tc *testkit.TestCluster, kind, prefix string, n int) []string {
	t.Helper()
	top, ok := tc.Node(0).Topology()
	if !ok || len(top.Members) != 2 {
		t.Fatalf("view %v, want 2 members", top.Members)
	}
	ring := cluster.DefaultHashConfig().Strategy().Build(top)
	per := map[string]int{}
	var out []string
	for i := 0; len(out) < n; i++ {
		if i > 100*n {
			t.Fatalf("%d IDs of %s: owners %v", i, kind, per)
		}
		id := prefix + strconv.Itoa(i)
		m, err := ring.Owner(cluster.NewIdentity(kind, id))
		if err != nil {
			t.Fatal(err)
		}
		if per[m.Address] < n/2 {
			per[m.Address]++
			out = append(out, id)
		}
	}
	return out
}

// owner returns the address of the member where order id runs (activating
// it).
func owner(t *testing.T, tc *testkit.TestCluster, id string) string {
	t.Helper()
	if _, err := ordersv1.NewOrdersClient(tc.Node(0), id).Kind(callCtx(t), nil); err != nil {
		t.Fatal(err)
	}
	a, ok := placements.Load(cluster.NewIdentity(ordersv1.OrdersKindName, id).String())
	if !ok {
		t.Fatalf("order %s: no activation recorded", id)
	}
	return a.(string)
}

// TestSchemaCallsFromOutside: every method of every service, called with
// the generated clients from both members (the grain on the caller's
// member for some IDs, on the other for the rest).
func TestSchemaCallsFromOutside(t *testing.T) {
	tc := newCluster(t)
	for m := range 2 {
		for _, id := range spread(t, tc, ordersv1.OrdersKindName, fmt.Sprintf("from%d-", m), 8) {
			t.Run(id, func(t *testing.T) {
				ctx := callCtx(t)
				c := ordersv1.NewOrdersClient(tc.Node(m), id)
				o, err := c.Init(ctx, &ordersv1.CreateOrder{
					Items:    []*ordersv1.LineItem{{Sku: "a", Quantity: 2, UnitPrice: &commonv1.Money{Currency: commonv1.Currency_CURRENCY_EUR, MinorUnits: 250}}},
					Customer: &commonv1.OrdersClient{CustomerId: "c1", Billing: &commonv1.Address{CountryCode: "DE"}},
				})
				if err != nil || o.GetStatus() != ordersv1.Status_STATUS_OPEN || o.GetCoupon() != "welcome-c1" || o.GetShipping().GetCountryCode() != "DE" ||
					o.GetItemsBySku()["a"].GetUnitPrice().GetMinorUnits() != 250 {
					t.Fatalf("Init: %v, %v", o, err)
				}
				if _, err := c.Init(ctx, &ordersv1.CreateOrder{}); !errors.Is(err, &cluster.GrainError{Code: "already_exists"}) {
					t.Fatalf("second Init: %v, want GrainError already_exists", err)
				}
				if o, err = c.Send(ctx, &ordersv1.AddItem{Item: &ordersv1.LineItem{Sku: "b", Quantity: 1}}); err != nil || len(o.GetItems()) != 2 {
					t.Fatalf("Send: %v, %v", o, err)
				}
				r, err := c.Receive(ctx, &ordersv1.PayOrder{Payment: &ordersv1.PayOrder_Invoice{Invoice: &ordersv1.Order_Invoice{Terms: durationpb.New(30 * 24 * time.Hour)}}})
				if err != nil || r.GetId() != "r-"+id || r.GetLabels()["status"] != "STATUS_PAID" || !r.GetAt().AsTime().Equal(time.Unix(1700000000, 0)) {
					t.Fatalf("Receive: %v, %v", r, err)
				}
				k, err := c.Kind(ctx, &ordersv1.KindQuery{})
				if err != nil || k.GetValue() != "STATUS_PAID" {
					t.Fatalf("Kind: %v, %v", k, err)
				}
				o, err = c.Identity(ctx, &emptypb.Empty{})
				if err != nil || o.GetId() != id || o.GetInvoice().GetTerms().AsDuration() != 30*24*time.Hour {
					t.Fatalf("Identity: %v, %v", o, err)
				}
				d, err := c.Context(ctx, timestamppb.New(time.Unix(1700000000, 0).Add(time.Hour)))
				if err != nil || d.AsDuration() != time.Hour {
					t.Fatalf("Context: %v, %v", d, err)
				}
				cl, err := c.Client(ctx, wrapperspb.Int64(42))
				if err != nil || cl.GetCustomerId() != "42" || cl.GetBilling().GetGeo().GetLat() != 46.9 {
					t.Fatalf("Client: %v, %v", cl, err)
				}
				if b, err := c.Old(ctx, wrapperspb.Bool(false)); err != nil || !b.GetValue() {
					t.Fatalf("Old: %v, %v", b, err)
				}
				e, err := c.Stop(ctx, &ordersv1.StopOrder{})
				if err != nil || e == nil {
					t.Fatalf("Stop: %v, %v", e, err)
				}
				if k, err = c.Kind(ctx, &ordersv1.KindQuery{Verbose: true}); err != nil || !strings.HasSuffix(k.GetValue(), ": STATUS_CANCELLED") {
					t.Fatalf("Kind after Stop: %v, %v", k, err)
				}

				ev := ordersv1.NewOrderEventsClient(tc.Node(m), id)
				for i := range 3 {
					if _, err := ev.Publish(ctx, &ordersv1.Event{OrderId: id, Status: ordersv1.Status(i + 1)}); err != nil {
						t.Fatal(err)
					}
				}
				p, err := ev.PollEvents(ctx, &ordersv1.PollEvents{Offset: 1, Limit: wrapperspb.UInt32(1)})
				if err != nil || len(p.GetEvents()) != 1 || p.GetEvents()[0].GetStatus() != ordersv1.Status_STATUS_PAID || p.GetNextOffset().GetValue() != 2 {
					t.Fatalf("PollEvents: %v, %v", p, err)
				}

				ad := ordersv1.NewAdminClient(tc.Node(m), id)
				if _, err := ad.Ping(ctx, &emptypb.Empty{}); err != nil {
					t.Fatal(err)
				}
				if mo, err := ad.AuditReceipt(ctx, &commonv1.Receipt{Labels: map[string]string{"a": "1", "b": "2"}}); err != nil || mo.GetMinorUnits() != 2 {
					t.Fatalf("AuditReceipt: %v, %v", mo, err)
				}
				if dv, err := ordersv1.NewKeywordedClient(tc.Node(m), id).Default(ctx, &type_.Default{Go: "go"}); err != nil || dv.GetGo() != "go!" {
					t.Fatalf("Default: %v, %v", dv, err)
				}
				f := type_.NewFuncClient(tc.Node(m), id)
				if mo, err := f.Go(ctx, &type_.Default{Go: "four"}); err != nil || mo.GetMinorUnits() != 4 {
					t.Fatalf("Go: %v, %v", mo, err)
				}
				if dv, err := f.Select(ctx, &emptypb.Empty{}); err != nil || dv.GetGo() != "selected" {
					t.Fatalf("Select: %v, %v", dv, err)
				}

				l := legacypb.NewLedgerV2Client(tc.Node(m), id)
				entry := &legacypb.Entry{Account: proto.String("acc"), Cents: proto.Int64(500), Kind: legacypb.Entry_DEBIT.Enum()}
				proto.SetExtension(entry, legacypb.E_SourceSystem, "mainframe")
				posted, err := l.PostEntry(ctx, entry)
				if err != nil || posted.GetSequence() != 1 || posted.GetLine()[0].GetBalance() != -500 || posted.GetLine()[0].GetAccount() != "acc@mainframe" {
					t.Fatalf("PostEntry: %v, %v", posted, err)
				}
				if posted, err = l.Lookup(ctx, &legacypb.Lookup{Account: proto.String("acc")}); err != nil || posted.GetLine()[0].GetBalance() != -500 {
					t.Fatalf("Lookup: %v, %v", posted, err)
				}
			})
		}
	}
}

// TestSchemaCallsFromInside: a grain calls another grain with the Future
// variant and answers in its ReenterAfter continuation: an order asks
// another order (Check), the admin grain (another service, another file)
// asks an order (Reopen); from both members, so caller and callee are on
// the same member for some pairs and on different ones for others.
func TestSchemaCallsFromInside(t *testing.T) {
	tc := newCluster(t)
	ids := spread(t, tc, ordersv1.OrdersKindName, "inside-", 8)
	for m := range 2 {
		for i, oid := range ids {
			ctx := callCtx(t)
			other := ids[(i+3)%len(ids)]
			if _, err := ordersv1.NewOrdersClient(tc.Node(m), other).Init(ctx, &ordersv1.CreateOrder{}); err != nil && !errors.Is(err, errAlreadyExists) {
				t.Fatal(err)
			}
			s, err := ordersv1.NewOrdersClient(tc.Node(m), oid).Check(ctx, &ordersv1.StartCheck{OtherOrder: other})
			want := oid + " sees " + cluster.NewIdentity(ordersv1.OrdersKindName, other).String() + ": STATUS_OPEN"
			if err != nil || s.GetValue() != want {
				t.Fatalf("Check %s → %s: %q, %v; want %q", oid, other, s.GetValue(), err, want)
			}
			o, err := ordersv1.NewAdminClient(tc.Node(m), "back-office").Reopen(ctx, wrapperspb.String(other))
			if err != nil || o.GetId() != other || o.GetStatus() != ordersv1.Status_STATUS_OPEN {
				t.Fatalf("Reopen %s: %v, %v", other, o, err)
			}
		}
	}
}

// TestSchemaErrors: a method's typed error, a plain error, a typed nil
// *GrainError and a panic, from both members; after the panic the grain
// is restarted (its state is gone) and answers the next call.
func TestSchemaErrors(t *testing.T) {
	tc := newCluster(t)
	for m := range 2 {
		for _, id := range spread(t, tc, ordersv1.OrdersKindName, fmt.Sprintf("err%d-", m), 8) {
			ctx := callCtx(t)
			c := ordersv1.NewOrdersClient(tc.Node(m), id)
			if _, err := c.Init(ctx, &ordersv1.CreateOrder{}); err != nil {
				t.Fatal(err)
			}
			var ge *cluster.GrainError
			if _, err := c.Error(ctx, &ordersv1.Fail{Code: "out_of_stock"}); !errors.As(err, &ge) || ge.Code != "out_of_stock" || ge.Message != "failed as asked" {
				t.Fatalf("typed error: %v", err)
			}
			if _, err := c.Error(ctx, &ordersv1.Fail{}); !errors.As(err, &ge) || ge.Code != cluster.CodeUnknown || ge.Message != "plain error" {
				t.Fatalf("plain error: %v", err)
			}
			if _, err := c.Error(ctx, &ordersv1.Fail{TypedNil: true}); !errors.As(err, &ge) || ge.Code != cluster.CodeUnknown {
				t.Fatalf("typed nil: %v", err)
			}
			if _, err := c.Error(ctx, &ordersv1.Fail{Panic: true, Code: "boom"}); !errors.As(err, &ge) || ge.Code != cluster.CodeInternal || !strings.Contains(ge.Message, "orders: boom") {
				t.Fatalf("panic: %v", err)
			}
			o, err := c.Identity(ctx, &emptypb.Empty{})
			if err != nil || o.GetStatus() != ordersv1.Status_STATUS_UNSPECIFIED {
				t.Fatalf("after the panic: %v, %v (want the restarted grain, without its order)", o, err)
			}
			if _, err := c.Send(ctx, &ordersv1.AddItem{}); !errors.Is(err, &cluster.GrainError{Code: "not_found"}) {
				t.Fatalf("Send after the panic: %v", err)
			}
		}
	}
}

// TestSchemaNilAndEmptyRequests: a nil request of every shape (a message
// of the service's package, Empty, a wrapper, a message of another
// package, a proto2 message) reaches the grain as an empty message,
// wherever the grain runs.
func TestSchemaNilAndEmptyRequests(t *testing.T) {
	tc := newCluster(t)
	for m := range 2 {
		for _, id := range spread(t, tc, ordersv1.OrdersKindName, fmt.Sprintf("nil%d-", m), 8) {
			ctx := callCtx(t)
			c := ordersv1.NewOrdersClient(tc.Node(m), id)
			if o, err := c.Init(ctx, nil); err != nil || o.GetStatus() != ordersv1.Status_STATUS_OPEN {
				t.Fatalf("Init(nil): %v, %v", o, err)
			}
			if o, err := c.Identity(ctx, nil); err != nil || o.GetId() != id {
				t.Fatalf("Identity(nil): %v, %v", o, err)
			}
			if k, err := c.Kind(ctx, nil); err != nil || k.GetValue() != "STATUS_OPEN" {
				t.Fatalf("Kind(nil): %v, %v", k, err)
			}
			if cl, err := c.Client(ctx, nil); err != nil || cl.GetCustomerId() != "0" {
				t.Fatalf("Client(nil): %v, %v", cl, err)
			}
			if e, err := c.Stop(ctx, nil); err != nil || e == nil {
				t.Fatalf("Stop(nil): %v, %v", e, err)
			}
			if _, err := ordersv1.NewAdminClient(tc.Node(m), id).Ping(ctx, nil); err != nil {
				t.Fatalf("Ping(nil): %v", err)
			}
			if mo, err := ordersv1.NewAdminClient(tc.Node(m), id).AuditReceipt(ctx, nil); err != nil || mo.GetMinorUnits() != 0 {
				t.Fatalf("AuditReceipt(nil): %v, %v", mo, err)
			}
			if dv, err := type_.NewFuncClient(tc.Node(m), id).Select(ctx, nil); err != nil || dv.GetGo() != "selected" {
				t.Fatalf("Select(nil): %v, %v", dv, err)
			}
		}
	}
}

// TestSchemaBigMessages: a 1 MiB request and reply work wherever the grain
// runs; a request larger than a frame fails at once with
// remote.ErrFrameTooLarge for a grain on the other member, and so does a
// small request whose reply is larger than a frame, after the method ran
// (once: the call is not retried).
func TestSchemaBigMessages(t *testing.T) {
	tc := newCluster(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	ids := [2][]string{spread(t, tc, ordersv1.OrdersKindName, "big0-", 4), spread(t, tc, ordersv1.OrdersKindName, "big1-", 4)}
	for m := range 2 {
		for _, id := range ids[m] {
			ctx := callCtx(t)
			c := ordersv1.NewOrdersClient(tc.Node(m), id)
			b, err := c.Echo(ctx, &ordersv1.Blob{Data: big})
			if err != nil || !bytes.Equal(b.GetData(), big) {
				t.Fatalf("Echo 1 MiB: %d bytes, %v", len(b.GetData()), err)
			}
			b, err = c.Echo(ctx, &ordersv1.Blob{GrowTo: 2 << 20})
			if err != nil || len(b.GetData()) != 2<<20 {
				t.Fatalf("Echo to 2 MiB: %d bytes, %v", len(b.GetData()), err)
			}
		}
	}
	placed := map[bool]int{}
	for m := range 2 {
		for _, id := range ids[m] {
			local := owner(t, tc, id) == tc.Address(m)
			placed[local]++
			c := ordersv1.NewOrdersClient(tc.Node(m), id)
			start := time.Now()
			_, err := c.Echo(callCtx(t), &ordersv1.Blob{Data: make([]byte, 5<<20)})
			if local && err != nil || !local && !errors.Is(err, remote.ErrFrameTooLarge) {
				t.Fatalf("Echo 5 MiB request (grain local: %v): %v", local, err)
			}
			n, _ := echoes.LoadOrStore(cluster.NewIdentity(ordersv1.OrdersKindName, id).String(), new(atomic.Int32))
			before := n.(*atomic.Int32).Load()
			_, err = c.Echo(callCtx(t), &ordersv1.Blob{GrowTo: 5 << 20})
			if local && err != nil || !local && !errors.Is(err, remote.ErrFrameTooLarge) {
				t.Fatalf("Echo with a 5 MiB reply (grain local: %v): %v after %v", local, err, time.Since(start))
			}
			if runs := n.(*atomic.Int32).Load() - before; runs != 1 {
				t.Fatalf("Echo with a 5 MiB reply (grain local: %v) ran %d times, want once", local, runs)
			}
		}
	}
	if placed[true] == 0 || placed[false] == 0 {
		t.Fatalf("grains on the caller's member / on the other: %d / %d, want both", placed[true], placed[false])
	}
}

// TestSchemaProto2: the proto2 service with its required fields missing.
// A request without them (a nil one included: it is an empty Entry) cannot
// be encoded and fails at once with remote.ErrSerialize, and a reply
// without them reaches the caller as a *GrainError of CodeInternal naming
// the field, wherever the grain runs.
func TestSchemaProto2(t *testing.T) {
	tc := newCluster(t)
	for m := range 2 {
		for _, id := range spread(t, tc, legacypb.LedgerV2KindName, fmt.Sprintf("p2-%d-", m), 8) {
			l := legacypb.NewLedgerV2Client(tc.Node(m), id)
			_, err := l.PostEntry(callCtx(t), nil)
			if !errors.Is(err, remote.ErrSerialize) || !strings.Contains(err.Error(), "required field acme.legacy.Entry.account not set") {
				t.Fatalf("%s from %d: PostEntry(nil): %v, want remote.ErrSerialize", id, m, err)
			}
			_, err = l.Lookup(callCtx(t), &legacypb.Lookup{Account: proto.String("nobody")})
			var ge *cluster.GrainError
			if !errors.As(err, &ge) || ge.Code != cluster.CodeInternal || !strings.Contains(ge.Message, "reply acme.legacy.Posted: ") || !strings.Contains(ge.Message, "required field acme.legacy.Posted.sequence not set") {
				t.Fatalf("%s from %d: Lookup of an unknown account: %v, want a GrainError %s", id, m, err, cluster.CodeInternal)
			}
		}
	}
}
