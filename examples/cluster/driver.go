package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/examples/cluster/accountpb"
)

// op is one deposit or withdrawal the driver sent.
type op struct {
	account string
	delta   int64 // signed: withdrawals are negative
}

// outcomes collects what the callers saw. Safe for concurrent use.
type outcomes struct {
	mu        sync.Mutex
	acked     map[string]op // applied, acknowledged
	refused   map[string]op // acknowledged as refused (insufficient funds)
	failed    map[string]op // no acknowledgement: may or may not be applied
	causes    map[string]int
	reads     int
	latencies []time.Duration // since the last progress line
	requests  int             // since the last progress line
	errors    int             // since the last progress line
	total     int
	all       []time.Duration // every latency, for the summary
	killed    string          // the member killed midway ("" until then)
	lostKill  int             // failed requests of the killed member's callers (in flight when it was killed)
}

func newOutcomes() *outcomes {
	return &outcomes{acked: map[string]op{}, refused: map[string]op{}, failed: map[string]op{}, causes: map[string]int{}}
}

// markKilled records that member was killed: its callers were stopped at
// that moment, so a failure they report afterwards is of a request that
// was in flight on a member cut off from the cluster, which can only time
// out (a real crash would have lost its caller too).
func (o *outcomes) markKilled(member string) {
	o.mu.Lock()
	o.killed = member
	o.mu.Unlock()
}

// record counts the outcome of one request made by a caller on member.
func (o *outcomes) record(member, req string, p op, res *Result, err error, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.requests++
	o.total++
	o.latencies = append(o.latencies, d)
	o.all = append(o.all, d)
	if err == nil && res.Err != "" {
		err = errors.New(res.Err)
	}
	switch {
	case err != nil:
		o.errors++
		c := cause(err)
		if member == o.killed {
			o.lostKill++
			c = "in flight on " + member + " when it was killed: " + c
		}
		o.causes[c]++
		if req != "" {
			o.failed[req] = p
		}
	case req == "":
		o.reads++
	case res.Applied:
		o.acked[req] = p
	default:
		o.refused[req] = p
	}
}

// cause names an error class for the summary.
func cause(err error) string {
	switch {
	case errors.Is(err, cluster.ErrTimeout):
		return "cluster: timeout (" + rootCause(err) + ")"
	case errors.Is(err, cluster.ErrShuttingDown):
		return "cluster: shutting down"
	case errors.Is(err, context.Canceled):
		return "cancelled (Ctrl-C)"
	}
	return rootCause(err)
}

func rootCause(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			s := err.Error()
			if len(s) > 80 {
				s = s[:80] + "…"
			}
			return s
		}
		err = u
	}
}

// window returns and resets the per-interval figures.
func (o *outcomes) window() (requests, errs int, p50, p99 time.Duration) {
	o.mu.Lock()
	lat := o.latencies
	requests, errs = o.requests, o.errors
	o.latencies, o.requests, o.errors = nil, 0, 0
	o.mu.Unlock()
	p50, p99 = quantile(lat, 0.5), quantile(lat, 0.99)
	return
}

func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[min(len(ds)-1, int(q*float64(len(ds))))]
}

// driver runs callers on one member until stop is closed (or the member is
// killed): each picks an account at random and deposits, withdraws or reads
// its balance, one request at a time.
type driver struct {
	accounts []string
	out      *outcomes
	wg       sync.WaitGroup
}

func (d *driver) start(c *cluster.Cluster, member string, callers int, stop <-chan struct{}, seed uint64) {
	for i := range callers {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		d.wg.Go(func() { d.caller(c, member, callerName(member, seed, i), rng, stop) })
	}
}

// callerName is the prefix of a caller's request IDs ("<name>-<seq>"). The
// seed differs per run: in --join mode the ledgers stay in Consul's KV store
// and the member's name is its address, so a later run on the same port
// would reuse the IDs of an earlier one, which the accounts answer as
// duplicates of the earlier requests.
func callerName(member string, seed uint64, i int) string {
	return fmt.Sprintf("%s%d", requestPrefix(member, seed), i)
}

// requestPrefix is what every request ID of member's callers starts with,
// and no other member's: the check's own prefix in --join mode.
func requestPrefix(member string, seed uint64) string {
	return fmt.Sprintf("%s-%x-c", member, seed)
}

func (d *driver) caller(c *cluster.Cluster, member, name string, rng *rand.Rand, stop <-chan struct{}) {
	for seq := 0; ; seq++ {
		select {
		case <-stop:
			return
		default:
		}
		acct := d.accounts[rng.IntN(len(d.accounts))]
		account := accountpb.NewAccountClient(c, acct)
		req := fmt.Sprintf("%s-%d", name, seq)
		var p op
		var res *Result
		var err error
		start := time.Now()
		// No deadline of its own: the cluster's RequestTimeout bounds it,
		// and a request in flight at the end is waited for, not cancelled.
		ctx := context.Background()
		switch r := rng.IntN(100); {
		case r < 50:
			p = op{acct, 1 + rng.Int64N(100)}
			res, err = account.Deposit(ctx, &accountpb.DepositRequest{Req: req, Amount: p.delta})
		case r < 85:
			p = op{acct, -(1 + rng.Int64N(150))}
			res, err = account.Withdraw(ctx, &accountpb.WithdrawRequest{Req: req, Amount: -p.delta})
		default:
			req = ""
			res, err = account.GetBalance(ctx, &accountpb.BalanceRequest{})
		}
		d.out.record(member, req, p, res, err, time.Since(start))
	}
}
