package dashboard

import (
	"context"
	_ "embed"
	"encoding/json"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

//go:embed page.html
var page []byte

// MetricsSource is where a member's OpenTelemetry metrics are read from: an
// sdkmetric.ManualReader registered on the member's MeterProvider satisfies
// it. The dashboard calls Collect from its HTTP handler goroutines, one call
// at a time per source.
type MetricsSource interface {
	Collect(ctx context.Context, rm *metricdata.ResourceMetrics) error
}

// Config configures a Dashboard. The zero value is usable.
type Config struct {
	// Title is shown at the top of the page; "fraktor cluster" when empty.
	Title string
	// Events is how many recent cluster events are kept (100 when ≤ 0).
	Events int
	// RateWindow is the shortest window over which request rates and
	// latency percentiles are computed (1 s when ≤ 0).
	RateWindow time.Duration
	// AllowedHosts are the host names (without port, compared without
	// regard to case) the dashboard answers requests for besides
	// "localhost", names ending in ".localhost" and IP literals, which it
	// always answers; a request whose Host header names another host is
	// refused with 403 Forbidden, so a web page elsewhere cannot read the
	// dashboard through a DNS name it points at 127.0.0.1 (DNS rebinding).
	// List the names the dashboard is reached by when it is served under
	// one; "*" allows any host.
	AllowedHosts []string
}

// Dashboard is an http.Handler serving the page at its root and the cluster
// state as JSON at "api/state" (relative to where it is mounted; mount it
// with http.StripPrefix under a path ending in "/"). All methods are safe
// for concurrent use.
type Dashboard struct {
	cfg    Config
	events *eventLog

	mu      sync.Mutex
	members []*member
	closed  bool
}

type member struct {
	name    string
	c       *cluster.Cluster
	src     MetricsSource
	sub     *actor.Subscription
	started atomic.Uint64

	mu   sync.Mutex // guards the metric samples and Collect
	base sample     // the window's start
	last sample     // the newest sample, at most RateWindow after base
	rate rates      // computed over the last full window
}

// New returns a Dashboard with no members.
func New(cfg Config) *Dashboard {
	if cfg.Title == "" {
		cfg.Title = "fraktor cluster"
	}
	if cfg.Events <= 0 {
		cfg.Events = 100
	}
	if cfg.RateWindow <= 0 {
		cfg.RateWindow = time.Second
	}
	return &Dashboard{cfg: cfg, events: newEventLog(cfg.Events)}
}

// Attach adds a member of this process: the page shows its status, lease and
// activations, its request rate and latency when src is not nil (the reader
// of its MeterProvider; see View for useful latency buckets), and the events
// of its event stream from now on (starting with the view it has). A member stays listed after it stops, with its final
// status. Attaching after Close does nothing.
func (d *Dashboard) Attach(c *cluster.Cluster, src MetricsSource) {
	m := &member{name: c.Self().ID, c: c, src: src}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	m.sub = d.subscribe(m)
	d.members = append(d.members, m)
	// The events before Attach are not replayed: the view the member has
	// now starts its record, so the page shows where it stands at once.
	if t, ok := c.Topology(); ok {
		d.events.add(m.name, "topology", c.System().Clock().Now(), "view %d: %d members (when attached)",
			t.Epoch, len(t.Members))
	}
}

// Close ends the event subscriptions. The handler keeps serving the last
// state it can read. Close is idempotent.
func (d *Dashboard) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	d.closed = true
	for _, m := range d.members {
		m.c.System().EventStream().Unsubscribe(m.sub)
	}
}

// ServeHTTP serves the page at "/" and the state at "/api/state", to GET and
// HEAD requests (other methods: 405) for an allowed host (others: 403; see
// Config.AllowedHosts).
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !d.hostAllowed(r.Host) {
		http.Error(w, "host not allowed", http.StatusForbidden)
		return
	}
	switch r.URL.Path {
	case "", "/", "/index.html":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(page)
	case "/api/state", "api/state":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(d.State(r.Context()))
	default:
		http.NotFound(w, r)
	}
}

// hostAllowed reports whether a request's Host header names a host the
// dashboard answers for.
func (d *Dashboard) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	// An IP literal, bracketed when it is IPv6 without a port.
	if _, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")); err == nil {
		return true
	}
	for _, a := range d.cfg.AllowedHosts {
		if a == "*" || strings.EqualFold(strings.TrimSuffix(a, "."), host) {
			return true
		}
	}
	return false
}

// State is what the page shows; ServeHTTP returns it as JSON.
type State struct {
	Title   string        `json:"title"`
	Now     time.Time     `json:"now"`
	Members []MemberState `json:"members"`
	Events  []Event       `json:"events"`
}

// MemberState is one member as the dashboard sees it. Members of this
// process (Local) carry their own status, lease and counts; members known
// only from a view carry what the view says.
type MemberState struct {
	ID          string `json:"id"`
	Key         string `json:"key"`
	Address     string `json:"address"`
	Incarnation uint64 `json:"incarnation"`
	Local       bool   `json:"local"`
	// InView: a ready member of this process has it in its current view.
	InView bool `json:"inView"`
	// Superseded: a newer incarnation of the same member ID is listed
	// too. After a fence or a restart the registry keeps the previous
	// incarnation in the view until its lease expires. The page shows such
	// a row as "previous incarnation" and does not count it as a member.
	Superseded bool   `json:"superseded,omitempty"`
	Status     string `json:"status"`
	// Lease is the membership lease state ("held", "lost", ...) and
	// LeaseLeftMs how long it is still guaranteed; local members only.
	Lease       string         `json:"lease,omitempty"`
	LeaseLeftMs int64          `json:"leaseLeftMs"`
	Kinds       []string       `json:"kinds"`
	Active      int            `json:"active"`
	ActiveKinds map[string]int `json:"activeKinds"`
	Started     uint64         `json:"started"`
	// Requests made from this member: rate over the last window, latency
	// percentiles in milliseconds (from the histogram's buckets), retries.
	Requests  uint64  `json:"requests"`
	ReqPerSec float64 `json:"reqPerSec"`
	P50Ms     float64 `json:"p50Ms"`
	P99Ms     float64 `json:"p99Ms"`
	Retries   int64   `json:"retries"`
	Metrics   bool    `json:"metrics"`
}

// State reads the attached members now.
func (d *Dashboard) State(ctx context.Context) State {
	d.mu.Lock()
	ms := slices.Clone(d.members)
	d.mu.Unlock()
	now := time.Now()
	st := State{Title: d.cfg.Title, Now: now, Events: d.events.recent()}
	inView := map[string]bool{}
	seen := map[string]bool{}
	for _, m := range ms {
		if m.c.Status() != cluster.StatusReady {
			continue
		}
		for _, v := range m.c.Members() {
			inView[v.Key()] = true
		}
	}
	for _, m := range ms {
		self := m.c.Self()
		lease := m.c.Lease()
		row := MemberState{
			ID: self.ID, Key: self.Key(), Address: self.Address, Incarnation: self.Incarnation,
			Local: true, InView: inView[self.Key()], Status: m.c.Status().String(),
			Lease: lease.Status.String(), LeaseLeftMs: lease.Remaining(now).Milliseconds(),
			Kinds: self.Kinds, ActiveKinds: m.c.ActiveCountByKind(), Started: m.started.Load(),
		}
		for _, n := range row.ActiveKinds {
			row.Active += n
		}
		if m.src != nil {
			r := m.sampleRates(ctx, now, d.cfg.RateWindow)
			row.Metrics, row.Requests, row.ReqPerSec, row.P50Ms, row.P99Ms, row.Retries = true, r.count, r.perSec, r.p50*1000, r.p99*1000, r.retries
		}
		seen[self.Key()] = true
		st.Members = append(st.Members, row)
	}
	// Members of other processes, as the views of this process's members
	// show them.
	for _, m := range ms {
		for _, v := range m.c.Members() {
			if seen[v.Key()] || !inView[v.Key()] {
				continue
			}
			seen[v.Key()] = true
			st.Members = append(st.Members, MemberState{ID: v.ID, Key: v.Key(), Address: v.Address,
				Incarnation: v.Incarnation, InView: true, Status: "in view", Kinds: v.Kinds})
		}
	}
	markSuperseded(st.Members)
	return st
}

// markSuperseded marks each row whose member ID has a row of a newer
// incarnation.
func markSuperseded(rows []MemberState) {
	newest := make(map[string]uint64, len(rows))
	for _, r := range rows {
		newest[r.ID] = max(newest[r.ID], r.Incarnation)
	}
	for i := range rows {
		rows[i].Superseded = rows[i].Incarnation < newest[rows[i].ID]
	}
}
