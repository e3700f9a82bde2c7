package main

import (
	"errors"
	"sync"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/examples/cluster/accountpb"
)

// The account grain's messages are generated from accountpb/account.proto
// (make generate); the generated kind and client register them with the
// remote serializers.
type (
	Result      = accountpb.Result
	AuditResult = accountpb.AuditResult
)

const accountKind = accountpb.AccountKindName

// errStale: the store refused a write because a newer activation of the
// account has written (or loaded) since.
var errStale = errors.New("demo: stale activation refused by the store")

// accountState is what the store keeps per account.
type accountState struct {
	token   cluster.FencingToken // the newest activation that loaded or wrote it
	balance int64
	applied map[string]int64    // request → signed amount
	refused map[string]struct{} // withdrawals refused for lack of funds
	carried int64               // the applied amounts no longer listed: balance = carried + Σ applied
}

// accountStore is the database the grains persist to: it outlives any
// member, and it fences writes by the activations' fencing tokens, so an
// activation that is still running after its successor started cannot
// overwrite the successor's state. Implementations are safe for concurrent
// use.
type accountStore interface {
	// load claims account id for the activation with token tok and
	// returns its state; errStale when a newer activation claimed it.
	load(id string, tok cluster.FencingToken) (accountState, error)
	// commit records request req of the activation with token tok:
	// applied with delta, or refused; errStale when a newer activation
	// claimed the account.
	commit(id string, tok cluster.FencingToken, req string, delta int64, applied bool) error
}

// store is the in-memory accountStore: one per process, shared by the
// members in it.
type store struct {
	mu       sync.Mutex
	accounts map[string]*accountState
}

func newStore() *store { return &store{accounts: map[string]*accountState{}} }

func (s *store) get(id string) *accountState {
	a := s.accounts[id]
	if a == nil {
		a = &accountState{applied: map[string]int64{}, refused: map[string]struct{}{}}
		s.accounts[id] = a
	}
	return a
}

func (s *store) load(id string, tok cluster.FencingToken) (accountState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.get(id)
	if tok.Less(a.token) {
		return accountState{}, errStale
	}
	a.token = tok
	cp := accountState{token: tok, balance: a.balance, applied: make(map[string]int64, len(a.applied)), refused: make(map[string]struct{}, len(a.refused))}
	for k, v := range a.applied {
		cp.applied[k] = v
	}
	for k := range a.refused {
		cp.refused[k] = struct{}{}
	}
	return cp, nil
}

func (s *store) commit(id string, tok cluster.FencingToken, req string, delta int64, applied bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.get(id)
	if tok.Less(a.token) {
		return errStale
	}
	a.token = tok
	if applied {
		a.applied[req] = delta
		a.balance += delta
	} else {
		a.refused[req] = struct{}{}
	}
	return nil
}

// accountGrain keeps one account: it loads its state from the store when
// activated and writes every change through, fenced by its token. It is the
// generated Account service's grain: requests are handled one at a time in
// arrival order (the grain's mailbox), and a request ID seen before gets
// the answer it got then.
type accountGrain struct {
	st    accountStore
	id    string
	tok   cluster.FencingToken
	state accountState
	err   error // the load's: the activation is stale
}

// accountGrains returns the account grains' kind, persisting to st.
func accountGrains(st accountStore) cluster.Kind {
	return accountpb.AccountKind(func(cluster.Identity) accountpb.AccountGrain { return &accountGrain{st: st} })
}

func (g *accountGrain) Activated(ctx cluster.GrainContext) error {
	g.id, g.tok = ctx.Identity().ID, ctx.FencingToken()
	g.state, g.err = g.st.load(g.id, g.tok)
	return nil // a stale activation answers with Err and passivates
}

func (g *accountGrain) Deposit(ctx cluster.GrainContext, m *accountpb.DepositRequest) (*Result, error) {
	return g.apply(ctx, m.GetReq(), m.GetAmount()), nil
}

func (g *accountGrain) Withdraw(ctx cluster.GrainContext, m *accountpb.WithdrawRequest) (*Result, error) {
	return g.apply(ctx, m.GetReq(), -m.GetAmount()), nil
}

func (g *accountGrain) GetBalance(ctx cluster.GrainContext, _ *accountpb.BalanceRequest) (*Result, error) {
	if g.err != nil {
		ctx.Passivate()
		return &Result{Err: g.err.Error()}, nil
	}
	return &Result{Balance: g.state.balance, Applied: true}, nil
}

// Audit fails in an activation whose load failed: its state is empty, not
// the account's, and read as the ledger it made every acknowledged request
// look lost (TestAuditSkipsActivationWhoseLoadFailed). It passivates, so
// the audit's next attempt activates the account again.
func (g *accountGrain) Audit(ctx cluster.GrainContext, _ *accountpb.AuditRequest) (*AuditResult, error) {
	if g.err != nil {
		ctx.Passivate()
		return nil, g.err
	}
	r := &AuditResult{Balance: g.state.balance, Carried: g.state.carried, Applied: make(map[string]int64, len(g.state.applied))}
	for k, v := range g.state.applied {
		r.Applied[k] = v
	}
	for k := range g.state.refused {
		r.Refused = append(r.Refused, k)
	}
	return r, nil
}

func (g *accountGrain) apply(ctx cluster.GrainContext, req string, delta int64) *Result {
	state := &g.state
	if g.err != nil {
		ctx.Passivate()
		return &Result{Err: g.err.Error()}
	}
	if _, ok := state.applied[req]; ok {
		return &Result{Balance: state.balance, Applied: true}
	}
	if _, ok := state.refused[req]; ok {
		return &Result{Balance: state.balance, Reason: "insufficient funds"}
	}
	ok := state.balance+delta >= 0
	if err := g.st.commit(g.id, g.tok, req, delta, ok); err != nil {
		// A newer activation owns the account: this one is stale.
		ctx.Passivate()
		return &Result{Err: err.Error()}
	}
	if !ok {
		state.refused[req] = struct{}{}
		return &Result{Balance: state.balance, Reason: "insufficient funds"}
	}
	state.applied[req] = delta
	state.balance += delta
	return &Result{Balance: state.balance, Applied: true}
}
