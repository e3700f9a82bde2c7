package typedschema_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
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
)

// errAlreadyExists is a typed error of the orders grain: it reaches the
// caller as a *cluster.GrainError of code "already_exists".
var errAlreadyExists = cluster.NewGrainError("already_exists", "order exists")

// order implements ordersv1.OrdersGrain: one order's state.
type order struct {
	id      cluster.Identity
	o       *ordersv1.Order
	started *timestamppb.Timestamp
}

func newOrder(id cluster.Identity) ordersv1.OrdersGrain { return &order{id: id} }

// placements maps an order's identity (its String) to the address of the
// member of its last activation, for the tests that tell a local grain
// from a remote one.
var placements sync.Map

func (g *order) Activated(ctx cluster.GrainContext) error {
	placements.Store(ctx.Identity().String(), ctx.Self().Address)
	return nil
}

func (g *order) snapshot() *ordersv1.Order {
	if g.o == nil {
		return &ordersv1.Order{Id: g.id.ID}
	}
	return proto.Clone(g.o).(*ordersv1.Order)
}

func (g *order) Init(_ cluster.GrainContext, req *ordersv1.CreateOrder) (*ordersv1.Order, error) {
	if g.o != nil {
		return nil, errAlreadyExists
	}
	g.o = &ordersv1.Order{Id: g.id.ID, Status: ordersv1.Status_STATUS_OPEN, Items: req.GetItems(),
		ItemsBySku: map[string]*ordersv1.LineItem{}, Shipping: req.GetCustomer().GetBilling(), CreatedAt: timestamppb.New(time.Unix(1700000000, 0))}
	for _, it := range req.GetItems() {
		g.o.ItemsBySku[it.GetSku()] = it
	}
	if c := req.GetCustomer(); c != nil {
		g.o.Coupon = proto.String("welcome-" + c.GetCustomerId())
	}
	return g.snapshot(), nil
}

func (g *order) Send(_ cluster.GrainContext, req *ordersv1.AddItem) (*ordersv1.Order, error) {
	if g.o == nil {
		return nil, cluster.NewGrainError("not_found", "order %s", g.id.ID)
	}
	g.o.Items = append(g.o.Items, req.GetItem())
	g.o.ItemsBySku[req.GetItem().GetSku()] = req.GetItem()
	return g.snapshot(), nil
}

func (g *order) Receive(_ cluster.GrainContext, req *ordersv1.PayOrder) (*commonv1.Receipt, error) {
	if g.o == nil {
		return nil, cluster.NewGrainError("not_found", "order %s", g.id.ID)
	}
	switch p := req.GetPayment().(type) {
	case *ordersv1.PayOrder_Card:
		g.o.Payment = &ordersv1.Order_Card_{Card: p.Card}
	case *ordersv1.PayOrder_Invoice:
		g.o.Payment = &ordersv1.Order_Invoice_{Invoice: p.Invoice}
	default:
		return nil, cluster.NewGrainError("invalid_argument", "no payment")
	}
	g.o.Status = ordersv1.Status_STATUS_PAID
	return &commonv1.Receipt{Id: "r-" + g.id.ID, At: g.o.GetCreatedAt(), Labels: map[string]string{"status": g.o.Status.String()}}, nil
}

func (g *order) Stop(ctx cluster.GrainContext, _ *ordersv1.StopOrder) (*emptypb.Empty, error) {
	if g.o != nil {
		g.o.Status = ordersv1.Status_STATUS_CANCELLED
	}
	return nil, nil // a nil reply arrives as an empty message
}

func (g *order) Kind(_ cluster.GrainContext, req *ordersv1.KindQuery) (*wrapperspb.StringValue, error) {
	s := g.snapshot().GetStatus().String()
	if req.GetVerbose() {
		s = g.id.String() + ": " + s
	}
	return wrapperspb.String(s), nil
}

func (g *order) Identity(ctx cluster.GrainContext, _ *emptypb.Empty) (*ordersv1.Order, error) {
	if ctx.Identity() != g.id {
		return nil, fmt.Errorf("identity %v, want %v", ctx.Identity(), g.id)
	}
	return g.snapshot(), nil
}

func (g *order) Context(_ cluster.GrainContext, req *timestamppb.Timestamp) (*durationpb.Duration, error) {
	if g.o == nil {
		return nil, cluster.NewGrainError("not_found", "order %s", g.id.ID)
	}
	g.o.Status = ordersv1.Status_STATUS_SHIPPED
	return durationpb.New(req.AsTime().Sub(g.o.GetCreatedAt().AsTime())), nil
}

func (g *order) Error(_ cluster.GrainContext, req *ordersv1.Fail) (*emptypb.Empty, error) {
	switch {
	case req.GetPanic():
		panic("orders: " + req.GetCode())
	case req.GetTypedNil():
		var ge *cluster.GrainError
		return nil, ge
	case req.GetCode() != "":
		return nil, cluster.NewGrainError(req.GetCode(), "failed as asked")
	}
	return nil, errors.New("plain error")
}

func (g *order) Client(_ cluster.GrainContext, req *wrapperspb.Int64Value) (*commonv1.OrdersClient, error) {
	return &commonv1.OrdersClient{CustomerId: fmt.Sprint(req.GetValue()), Billing: &commonv1.Address{
		Lines: []string{"1 Main St"}, CountryCode: "CH", Geo: &commonv1.Address_Geo{Lat: 46.9, Lng: 7.4}}}, nil
}

// echoes counts the runs of Echo by order identity (its String).
var echoes sync.Map

func (g *order) Echo(_ cluster.GrainContext, req *ordersv1.Blob) (*ordersv1.Blob, error) {
	n, _ := echoes.LoadOrStore(g.id.String(), new(atomic.Int32))
	n.(*atomic.Int32).Add(1)
	data := append([]byte(nil), req.GetData()...)
	if n := int(req.GetGrowTo()); n > len(data) {
		data = append(data, make([]byte, n-len(data))...)
	}
	return &ordersv1.Blob{Data: data}, nil
}

// Check asks another order for its status with the Future variant and
// replies in the ReenterAfter continuation, on the grain's turn.
func (g *order) Check(ctx cluster.GrainContext, req *ordersv1.StartCheck) (*wrapperspb.StringValue, error) {
	reply := cluster.DeferReply[*wrapperspb.StringValue](ctx)
	other := ordersv1.NewOrdersClient(cluster.Get(ctx.System()), req.GetOtherOrder())
	ctx.ReenterAfter(other.KindFuture(&ordersv1.KindQuery{Verbose: true}, 0), func(res any, err error) {
		if err != nil {
			reply.Reply(nil, err)
			return
		}
		reply.Reply(wrapperspb.String(g.id.ID+" sees "+res.(*wrapperspb.StringValue).GetValue()), nil)
	})
	return nil, nil
}

func (g *order) Old(_ cluster.GrainContext, req *wrapperspb.BoolValue) (*wrapperspb.BoolValue, error) {
	return wrapperspb.Bool(!req.GetValue()), nil
}

// events implements the deprecated snake_case service order_events.
type events struct{ log []*ordersv1.Event }

func (e *events) Publish(_ cluster.GrainContext, req *ordersv1.Event) (*emptypb.Empty, error) {
	e.log = append(e.log, req)
	return &emptypb.Empty{}, nil
}

func (e *events) PollEvents(_ cluster.GrainContext, req *ordersv1.PollEvents) (*ordersv1.EventPage, error) {
	limit := uint64(10)
	if req.Limit != nil {
		limit = uint64(req.GetLimit().GetValue())
	}
	page := &ordersv1.EventPage{}
	for i := req.GetOffset(); i < uint64(len(e.log)) && uint64(len(page.Events)) < limit; i++ {
		page.Events = append(page.Events, e.log[i])
	}
	if next := req.GetOffset() + uint64(len(page.Events)); next < uint64(len(e.log)) {
		page.NextOffset = wrapperspb.UInt64(next)
	}
	return page, nil
}

// admin implements acme.orders.v1.admin (a file without messages).
type admin struct{ pings int }

func (a *admin) Ping(cluster.GrainContext, *emptypb.Empty) (*emptypb.Empty, error) {
	a.pings++
	return &emptypb.Empty{}, nil
}

// Reopen calls the order from inside this grain with the Future variant.
func (a *admin) Reopen(ctx cluster.GrainContext, req *wrapperspb.StringValue) (*ordersv1.Order, error) {
	reply := cluster.DeferReply[*ordersv1.Order](ctx)
	o := ordersv1.NewOrdersClient(cluster.Get(ctx.System()), req.GetValue())
	ctx.ReenterAfter(o.IdentityFuture(&emptypb.Empty{}, 0), func(res any, err error) {
		if err != nil {
			reply.Reply(nil, err)
			return
		}
		reply.Reply(res.(*ordersv1.Order), nil)
	})
	return nil, nil
}

func (a *admin) AuditReceipt(_ cluster.GrainContext, req *commonv1.Receipt) (*commonv1.Money, error) {
	return &commonv1.Money{Currency: commonv1.Currency_CURRENCY_EUR, MinorUnits: int64(len(req.GetLabels()))}, nil
}

// keyworded implements acme.orders.v1.keyworded, whose messages are of the
// Go package type_.
type keyworded struct{}

func (keyworded) Default(_ cluster.GrainContext, req *type_.Default) (*type_.Default, error) {
	return &type_.Default{Go: req.GetGo() + "!"}, nil
}

// fn implements acme.type.func (Go names Func, Go, Select).
type fn struct{}

func (fn) Go(_ cluster.GrainContext, req *type_.Default) (*commonv1.Money, error) {
	return &commonv1.Money{MinorUnits: int64(len(req.GetGo()))}, nil
}

func (fn) Select(cluster.GrainContext, *emptypb.Empty) (*type_.Default, error) {
	return &type_.Default{Go: "selected"}, nil
}

// ledger implements the proto2 service acme.legacy.ledger_v2.
type ledger struct {
	seq   uint64
	lines map[string]int64
}

func (l *ledger) PostEntry(_ cluster.GrainContext, req *legacypb.Entry) (*legacypb.Posted, error) {
	if l.lines == nil {
		l.lines = map[string]int64{}
	}
	cents := req.GetCents()
	if req.GetKind() == legacypb.Entry_DEBIT {
		cents = -cents
	}
	l.lines[req.GetAccount()] += cents
	l.seq++
	account := req.GetAccount()
	if proto.HasExtension(req, legacypb.E_SourceSystem) {
		account += "@" + proto.GetExtension(req, legacypb.E_SourceSystem).(string)
	}
	return &legacypb.Posted{Sequence: proto.Uint64(l.seq), Line: []*legacypb.Posted_Line{{
		Account: proto.String(account), Balance: proto.Int64(l.lines[req.GetAccount()])}}}, nil
}

// Lookup forgets the required sequence when the account is unknown.
func (l *ledger) Lookup(_ cluster.GrainContext, req *legacypb.Lookup) (*legacypb.Posted, error) {
	b, ok := l.lines[req.GetAccount()]
	if !ok {
		return &legacypb.Posted{}, nil
	}
	return &legacypb.Posted{Sequence: proto.Uint64(l.seq), Line: []*legacypb.Posted_Line{{Account: proto.String(req.GetAccount()), Balance: proto.Int64(b)}}}, nil
}

// kinds are the kinds of every service of the schema.
func kinds() []cluster.Kind {
	return []cluster.Kind{
		ordersv1.OrdersKind(newOrder),
		ordersv1.OrderEventsKind(func(cluster.Identity) ordersv1.OrderEventsGrain { return &events{} }),
		ordersv1.AdminKind(func(cluster.Identity) ordersv1.AdminGrain { return &admin{} }),
		ordersv1.KeywordedKind(func(cluster.Identity) ordersv1.KeywordedGrain { return keyworded{} }),
		type_.FuncKind(func(cluster.Identity) type_.FuncGrain { return fn{} }),
		legacypb.LedgerV2Kind(func(cluster.Identity) legacypb.LedgerV2Grain { return &ledger{} }),
	}
}
