package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/cluster/dashboard"
)

// run runs the demo and returns the exit code: 0, or 1 when the run failed
// or the consistency check did not hold.
func run(ctx context.Context, o options, w io.Writer) int {
	level := slog.LevelError
	if o.verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	prov, closeProv, err := newProvider(o, log)
	if err != nil {
		fmt.Fprintln(w, err)
		return 1
	}
	defer closeProv()
	reg, embedded := prov.(*cluster.MemoryRegistry)
	kill := embedded && !o.noKill && o.members > 1
	var st accountStore = newStore()
	var kv *kvStore
	if o.join {
		if kv, err = newKVStore(o.consul, clusterName); err != nil {
			fmt.Fprintln(w, err)
			return 1
		}
		st = kv
	}

	// Members.
	where := "embedded registry"
	if o.consul != "" {
		where = "Consul at " + o.consul
	}
	fmt.Fprintf(w, "starting %d member(s), %s, loopback TCP; %d accounts, %d callers per member, %s\n",
		o.members, where, o.grains, o.callers, o.duration)
	if !embedded && !o.noKill && !o.join {
		fmt.Fprintln(w, "(no member is killed with --consul: killing one abruptly needs the embedded registry's fault injection)")
	}
	if !embedded {
		// Without it the first 12 s of 0 req/s and timeouts look like a
		// failure, and a shorter --duration acknowledges nothing.
		fmt.Fprintf(w, "(with Consul a member activates grains once it has been in the cluster for the wait-out, %s: requests wait until then)\n", consulWaitOut)
	}
	var members []*member
	shutdownAll := func() {
		sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		for _, m := range members {
			wg.Go(func() {
				if err := m.shutdown(sctx); err != nil && !m.dead.Load() {
					fmt.Fprintf(w, "shutdown of %s: %v\n", m.name, err)
				}
			})
		}
		wg.Wait()
	}
	for i := range o.members {
		name := fmt.Sprintf("m%d", i+1)
		if o.join {
			name = ""
		}
		p := prov
		var gate *joinGate
		if kill && i == o.members-1 {
			gate = &joinGate{Provider: prov}
			p = gate
		}
		m, err := startMember(ctx, name, p, o.consul != "", st, log)
		if err != nil {
			fmt.Fprintln(w, err)
			shutdownAll()
			return 1
		}
		m.gate = gate
		members = append(members, m)
	}
	dcfg := dashboard.Config{Title: "fraktor demo: accounts"}
	if host, _, err := net.SplitHostPort(o.dashboard); err == nil && host != "" {
		// --dashboard names the host the page is reached by; a DNS name
		// must be allowed (IP literals and localhost always are).
		dcfg.AllowedHosts = []string{host}
	}
	dash := dashboard.New(dcfg)
	for _, m := range members {
		dash.Attach(m.c, m.reader)
	}
	readyCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err = awaitView(readyCtx, members, o.members)
	cancel()
	if err != nil {
		fmt.Fprintln(w, err)
		dash.Close()
		shutdownAll()
		return 1
	}
	for _, m := range members {
		fmt.Fprintf(w, "  %s ready at %s (incarnation %d)\n", m.name, m.c.Self().Address, m.c.Self().Incarnation)
	}
	srv, err := serveDashboard(o.dashboard, dash, w)
	if err != nil {
		fmt.Fprintln(w, err)
	}

	// Activation tracking: which member hosts which account, and which of
	// the killed member's accounts started again elsewhere.
	track := newTracker(members)

	// Load.
	accounts := make([]string, o.grains)
	for i := range accounts {
		accounts[i] = fmt.Sprintf("acct-%04d", i)
	}
	out := newOutcomes()
	drv := &driver{accounts: accounts, out: out}
	stops := make([]chan struct{}, len(members))
	seed := uint64(time.Now().UnixNano())
	for i, m := range members {
		stops[i] = make(chan struct{})
		drv.start(m.c, m.name, o.callers, stops[i], seed+uint64(i)*7919)
	}
	stopped := make([]bool, len(members))
	stopLoad := func(i int) {
		if !stopped[i] {
			stopped[i] = true
			close(stops[i])
		}
	}

	start := time.Now()
	killAt := o.duration / 2
	end := time.NewTimer(o.duration)
	defer end.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var killTimer <-chan time.Time
	if kill {
		t := time.NewTimer(killAt)
		defer t.Stop()
		killTimer = t.C
	}
	victim := len(members) - 1
loop:
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(w, "interrupted: stopping gracefully")
			break loop
		case <-end.C:
			break loop
		case <-killTimer:
			v := members[victim]
			out.markKilled(v.name)
			stopLoad(victim)
			n := track.markVictim(v)
			v.kill(reg)
			fmt.Fprintf(w, "[%4.1fs] KILL %s abruptly (no leave, connections cut, lease not renewed); it hosted %d accounts\n",
				time.Since(start).Seconds(), v.name, n)
		case <-tick.C:
			progress(w, time.Since(start), members, out, track)
		}
	}
	for i := range members {
		stopLoad(i)
	}
	fmt.Fprintln(w, "stopping the load; waiting for requests in flight")
	drv.wg.Wait()

	// Audit through a live member, then shut down.
	var auditor *member
	for _, m := range members {
		if !m.dead.Load() {
			auditor = m
			break
		}
	}
	actCtx := context.WithoutCancel(ctx)
	auditCtx, cancelAudit := context.WithTimeout(actCtx, 60*time.Second)
	ledgers, auditErr := audit(auditCtx, auditor.c, accounts)
	cancelAudit()
	hosted := track.summary()
	dash.Close()
	if srv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = srv.Shutdown(sctx)
		cancel()
	}
	fmt.Fprintln(w, "shutting down gracefully")
	shutdownAll()
	compacted := ""
	if kv != nil {
		// The ledgers outlive the run in Consul. This run's entries served
		// only its check, which works on the audit above: they go now.
		n, err := kv.compact(requestPrefix(members[0].name, seed))
		compacted = fmt.Sprintf("ledger entries of this run folded into the balances in Consul: %d\n", n)
		if err != nil {
			compacted += fmt.Sprintf("  (compacting the ledgers: %v)\n", err)
		}
	}

	// Summary.
	fmt.Fprintln(w, "\n== summary ==")
	out.mu.Lock()
	failed := out.total - len(out.acked) - len(out.refused) - out.reads
	fmt.Fprintf(w, "requests: %d in %.1fs; acknowledged %d (applied %d, refused for insufficient funds %d, balance reads %d); failed %d",
		out.total, time.Since(start).Seconds(), len(out.acked)+len(out.refused)+out.reads, len(out.acked), len(out.refused), out.reads, failed)
	if out.lostKill > 0 {
		// The killed member's callers stopped at the kill; the requests
		// they had in flight were on a member cut off from the others.
		fmt.Fprintf(w, " (%d in flight on %s when it was killed; on the live members %d)", out.lostKill, out.killed, failed-out.lostKill)
	}
	fmt.Fprintln(w)
	causes := make([]string, 0, len(out.causes))
	for c := range out.causes {
		causes = append(causes, c)
	}
	sort.Strings(causes)
	for _, c := range causes {
		fmt.Fprintf(w, "  failed: %d × %s\n", out.causes[c], c)
	}
	all := out.all
	out.mu.Unlock()
	fmt.Fprintf(w, "latency: p50 %s, p99 %s, max %s\n", round(quantile(all, 0.5)), round(quantile(all, 0.99)), round(quantile(all, 1)))
	fmt.Fprintf(w, "activations started per member: %s\n", hosted)
	if kill {
		fmt.Fprintf(w, "%s\n", track.reactivated())
	}
	fmt.Fprint(w, compacted)
	if auditErr != nil {
		fmt.Fprintf(w, "consistency check: FAILED: %v\n", auditErr)
		return 1
	}
	own := ""
	if o.join {
		// One process knows only its own callers' outcomes: the check
		// covers the requests this process sent.
		// (The member's callers were started with seed: it is member 0.)
		own = requestPrefix(members[0].name, seed)
	}
	v := check(out, ledgers, own)
	v.print(w)
	if !v.ok() {
		return 1
	}
	return 0
}

func round(d time.Duration) time.Duration {
	switch {
	case d > 10*time.Millisecond:
		return d.Round(time.Millisecond)
	case d > 10*time.Microsecond:
		return d.Round(10 * time.Microsecond)
	}
	return d
}

// serveDashboard serves dash on addr; nil when addr is empty.
func serveDashboard(addr string, dash *dashboard.Dashboard, w io.Writer) (*http.Server, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		// The default port may be taken: any free port will do.
		host, _, _ := net.SplitHostPort(addr)
		if ln, err = net.Listen("tcp", net.JoinHostPort(host, "0")); err != nil {
			return nil, fmt.Errorf("demo: dashboard: %w", err)
		}
	}
	srv := &http.Server{Handler: dash, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(w, "dashboard:", err)
		}
	}()
	fmt.Fprintf(w, "dashboard: http://%s/\n", ln.Addr())
	return srv, nil
}

func progress(w io.Writer, el time.Duration, members []*member, out *outcomes, track *tracker) {
	reqs, errs, p50, p99 := out.window()
	var act []string
	var retries int64
	for _, m := range members {
		retries += m.retries()
		if m.dead.Load() {
			act = append(act, m.name+"=dead")
			continue
		}
		act = append(act, fmt.Sprintf("%s=%d", m.name, m.c.ActiveCount()))
	}
	line := fmt.Sprintf("[%4.1fs] %5d req/s  p50 %-8s p99 %-8s activations %s  retries %d  errors %d",
		el.Seconds(), reqs, round(p50), round(p99), strings.Join(act, " "), retries, errs)
	if s := track.progress(); s != "" {
		line += "  " + s
	}
	fmt.Fprintln(w, line)
}
