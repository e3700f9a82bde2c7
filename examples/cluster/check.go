package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/examples/cluster/accountpb"
)

// audit asks every account grain, through c, for its balance and ledger.
func audit(ctx context.Context, c *cluster.Cluster, accounts []string) (map[string]*AuditResult, error) {
	out := make(map[string]*AuditResult, len(accounts))
	for _, a := range accounts {
		client := accountpb.NewAccountClient(c, a)
		for {
			r, err := client.Audit(ctx, &accountpb.AuditRequest{})
			if err == nil {
				out[a] = r
				break
			}
			// A cluster that is still settling (a member fenced itself,
			// a handover is waiting out a departed owner) answers with a
			// timeout after its retries, and an activation whose load
			// failed with its error (it passivates): ask again until ctx
			// ends.
			var ge *cluster.GrainError
			if !(errors.Is(err, cluster.ErrTimeout) || errors.As(err, &ge)) || ctx.Err() != nil {
				return nil, fmt.Errorf("demo: audit of account %s: %w", a, err)
			}
		}
	}
	return out, nil
}

// verdict is the consistency check's result.
type verdict struct {
	ackedDeposits, ackedWithdrawals int64 // acknowledged, applied
	failedApplied                   int64 // sum of failed requests the ledgers show applied
	failedAppliedN, failedLostN     int   // failed requests applied / not applied
	balances                        int64
	ownLedger                       int64  // sum of the ledger entries with the own prefix
	own                             string // the request-ID prefix of this process ("": every request)
	problems                        []string
}

func (v *verdict) ok() bool { return len(v.problems) == 0 }

func (v *verdict) fail(format string, args ...any) {
	if len(v.problems) < 20 {
		v.problems = append(v.problems, fmt.Sprintf(format, args...))
	} else if len(v.problems) == 20 {
		v.problems = append(v.problems, "…")
	}
}

// check compares what the callers saw with the grains' ledgers. It is sound
// whatever happened to requests that failed: each carries an ID, the grains
// apply an ID at most once and keep a ledger of the IDs they applied, so a
// failed request is counted exactly when its account's ledger shows it.
// The check fails when:
//   - an acknowledged request is missing from its account's ledger (lost),
//     or is there with another amount;
//   - a request acknowledged as refused was applied;
//   - a ledger holds a request nobody sent;
//   - an account's balance differs from the sum of its ledger (plus what
//     it carries from finished runs, --join), or is negative (overdrawn);
//   - the sum of all balances differs from acknowledged deposits minus
//     acknowledged withdrawals plus the failed requests found applied;
//   - no deposit or withdrawal was acknowledged at all.
//
// With a non-empty own prefix (--join: several processes call the same
// accounts) only requests whose ID starts with it are this process's: other
// ledger entries are not questioned, and the last relation becomes: the sum
// of this process's ledger entries equals its acknowledged deposits minus
// withdrawals plus its failed requests found applied.
func check(out *outcomes, ledgers map[string]*AuditResult, own string) *verdict {
	v := &verdict{own: own}
	out.mu.Lock()
	defer out.mu.Unlock()
	for req, p := range out.acked {
		if p.delta >= 0 {
			v.ackedDeposits += p.delta
		} else {
			v.ackedWithdrawals -= p.delta
		}
		l := ledgers[p.account]
		if l == nil {
			v.fail("account %s missing from the audit", p.account)
			continue
		}
		if d, ok := l.Applied[req]; !ok {
			v.fail("acknowledged request %s (%+d on %s) is not in the ledger: lost", req, p.delta, p.account)
		} else if d != p.delta {
			v.fail("request %s applied as %+d, sent as %+d", req, d, p.delta)
		}
	}
	for req, p := range out.refused {
		if l := ledgers[p.account]; l == nil {
			v.fail("account %s missing from the audit", p.account)
		} else if _, ok := l.Applied[req]; ok {
			v.fail("request %s was acknowledged as refused but applied", req)
		}
	}
	names := make([]string, 0, len(ledgers))
	for a := range ledgers {
		names = append(names, a)
	}
	sort.Strings(names)
	for _, a := range names {
		l := ledgers[a]
		var sum int64
		for req, d := range l.Applied {
			sum += d
			if !strings.HasPrefix(req, own) {
				continue
			}
			v.ownLedger += d
			if _, ok := out.acked[req]; ok {
				continue
			}
			if p, ok := out.failed[req]; ok && p.account == a && p.delta == d {
				v.failedApplied += d
				v.failedAppliedN++
				continue
			}
			v.fail("ledger of %s holds request %s (%+d) that no caller sent", a, req, d)
		}
		if sum += l.Carried; sum != l.Balance {
			v.fail("account %s: balance %d but its ledger sums to %d (%d carried)", a, l.Balance, sum, l.Carried)
		}
		if l.Balance < 0 {
			v.fail("account %s overdrawn: %d", a, l.Balance)
		}
		v.balances += l.Balance
	}
	v.failedLostN = len(out.failed) - v.failedAppliedN
	if len(out.acked)+len(out.refused) == 0 {
		// Every relation below holds trivially (0 == 0): a run in which
		// no request got through, all of them timing out, checked
		// nothing and must not pass (TestCheckFailsWithNothingAcknowledged).
		v.fail("no deposit or withdrawal was acknowledged: nothing was checked")
	}
	want := v.ackedDeposits - v.ackedWithdrawals + v.failedApplied
	if own == "" && v.balances != want {
		v.fail("sum of balances %d != acknowledged deposits − withdrawals + failed-but-applied = %d", v.balances, want)
	}
	if v.ownLedger != want {
		v.fail("sum of this process's ledger entries %d != acknowledged deposits − withdrawals + failed-but-applied = %d", v.ownLedger, want)
	}
	return v
}

func (v *verdict) print(w io.Writer) {
	what, sum := "sum of balances", v.balances
	if v.own != "" {
		what, sum = "sum of this process's ledger entries", v.ownLedger
	}
	fmt.Fprintf(w, "consistency check: %s %d == acknowledged deposits %d − acknowledged withdrawals %d + failed requests found applied %d (%d of them; %d failed requests were not applied): ",
		what, sum, v.ackedDeposits, v.ackedWithdrawals, v.failedApplied, v.failedAppliedN, v.failedLostN)
	if v.ok() {
		fmt.Fprintln(w, "OK")
		return
	}
	fmt.Fprintln(w, "FAILED")
	for _, p := range v.problems {
		fmt.Fprintln(w, "  -", p)
	}
}
