package main

import (
	"errors"
	"sync"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// The account grain's messages. They cross members as JSON.
type (
	// Deposit adds Amount; Req identifies the request, so a retried or
	// repeated request is applied at most once.
	Deposit struct {
		Req    string
		Amount int64
	}
	// Withdraw takes Amount unless the balance is smaller (then the
	// withdrawal is refused, never overdrawn).
	Withdraw struct {
		Req    string
		Amount int64
	}
	// Balance asks for the balance.
	Balance struct{}
	// Audit asks for the balance and the account's ledger.
	Audit struct{}
	// Result answers Deposit, Withdraw and Balance. Applied is false for a
	// refused withdrawal (Reason says why) and for a write the store refused
	// (Err: the activation is stale).
	Result struct {
		Balance int64
		Applied bool
		Reason  string
		Err     string
	}
	// AuditResult answers Audit: the balance, the applied requests with
	// their signed amounts and the refused ones.
	AuditResult struct {
		Balance int64
		Applied map[string]int64
		Refused []string
	}
)

const accountKind = "account"

func registerMessages(s *remote.Serializers) error {
	return errors.Join(
		remote.RegisterJSON[*Deposit](s, "demo.Deposit"),
		remote.RegisterJSON[*Withdraw](s, "demo.Withdraw"),
		remote.RegisterJSON[*Balance](s, "demo.Balance"),
		remote.RegisterJSON[*Audit](s, "demo.Audit"),
		remote.RegisterJSON[*Result](s, "demo.Result"),
		remote.RegisterJSON[*AuditResult](s, "demo.AuditResult"),
	)
}

// errStale: the store refused a write because a newer activation of the
// account has written (or loaded) since.
var errStale = errors.New("demo: stale activation refused by the store")

// accountState is what the store keeps per account.
type accountState struct {
	token   cluster.FencingToken // the newest activation that loaded or wrote it
	balance int64
	applied map[string]int64    // request → signed amount
	refused map[string]struct{} // withdrawals refused for lack of funds
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
// activated and writes every change through, fenced by its token. Requests
// are handled one at a time in arrival order (the grain's mailbox), and a
// request ID seen before gets the answer it got then.
func accountGrain(st accountStore) cluster.Kind {
	return cluster.NewKind(accountKind, actor.PropsFromProducer(func() actor.Actor {
		var (
			id    string
			tok   cluster.FencingToken
			state accountState
			err   error
		)
		return actor.ReceiveFunc(func(c actor.Context) {
			switch m := c.Message().(type) {
			case *actor.Started:
				ident, _ := cluster.IdentityOf(c)
				tok, _ = cluster.FencingTokenOf(c)
				id = ident.ID
				state, err = st.load(id, tok)
			case *Deposit:
				c.Respond(apply(st, c, id, tok, &state, err, m.Req, m.Amount))
			case *Withdraw:
				c.Respond(apply(st, c, id, tok, &state, err, m.Req, -m.Amount))
			case *Balance:
				c.Respond(&Result{Balance: state.balance, Applied: true})
			case *Audit:
				r := &AuditResult{Balance: state.balance, Applied: make(map[string]int64, len(state.applied))}
				for k, v := range state.applied {
					r.Applied[k] = v
				}
				for k := range state.refused {
					r.Refused = append(r.Refused, k)
				}
				c.Respond(r)
			}
		})
	}))
}

func apply(st accountStore, c actor.Context, id string, tok cluster.FencingToken, state *accountState, loadErr error, req string, delta int64) *Result {
	if loadErr != nil {
		cluster.Passivate(c)
		return &Result{Err: loadErr.Error()}
	}
	if _, ok := state.applied[req]; ok {
		return &Result{Balance: state.balance, Applied: true}
	}
	if _, ok := state.refused[req]; ok {
		return &Result{Balance: state.balance, Reason: "insufficient funds"}
	}
	ok := state.balance+delta >= 0
	if err := st.commit(id, tok, req, delta, ok); err != nil {
		// A newer activation owns the account: this one is stale.
		cluster.Passivate(c)
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
