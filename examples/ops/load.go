package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// loadOptions configures the load driver.
type loadOptions struct {
	grains      int           // counters called; sessions are grains/4
	workers     int           // concurrent callers
	duration    time.Duration // 0: until stopped
	reqTimeout  time.Duration // each request's deadline
	waitMembers int           // members (this one included) to see before the load starts
	report      time.Duration // progress line period
	fill        int           // > 0: activate this many counters once, then stop
	rate        float64       // > 0: requests per second in all (open loop at that pace); 0: as fast as the workers go
	answered    chan<- string // when set, the hosting member of each answer (dropped when full): tests wait on it
}

// identityText matches the grain identities and member incarnations in
// error texts, so that texts that differ only there are counted together.
var identityText = regexp.MustCompile(`(counter/c|session/s|fill)-\d+|#\d+|127\.0\.0\.1:\d+`)

// outcome classes: "ok" or an error's class.
func classify(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, cluster.ErrShuttingDown):
		return "shutting_down"
	case errors.Is(err, cluster.ErrNoSuchKind):
		return "no_such_kind"
	case errors.Is(err, cluster.ErrActivationFailed):
		return "activation_failed"
	case errors.Is(err, actor.ErrMailboxFull):
		return "mailbox_full"
	case errors.Is(err, remote.ErrUnknownType):
		return "unknown_type"
	case errors.Is(err, cluster.ErrTimeout):
		switch {
		case errors.Is(err, remote.ErrClusterMismatch):
			return "timeout/cluster_mismatch"
		case errors.Is(err, remote.ErrHandshake):
			return "timeout/handshake"
		case errors.Is(err, remote.ErrPeerUnreachable):
			return "timeout/peer_unreachable"
		case errors.Is(err, cluster.ErrOwnershipChanged):
			return "timeout/ownership_changed"
		case errors.Is(err, actor.ErrDeadLetter):
			return "timeout/dead_letter"
		case strings.Contains(err.Error(), "attempts"):
			return "timeout/attempts_exhausted"
		case errors.Is(err, context.DeadlineExceeded):
			return "timeout/deadline"
		}
		return "timeout"
	case errors.Is(err, actor.ErrDeadLetter):
		return "dead_letter"
	}
	return "other"
}

// loadStats counts every request's outcome.
type loadStats struct {
	mu        sync.Mutex
	start     time.Time
	total     map[string]int64
	samples   map[string]string // one error text per class
	texts     map[string]int64  // error texts with the identity blanked, counted
	interval  map[string]int64
	lat       []time.Duration // this interval's successful latencies
	allLat    []time.Duration
	byMember  map[string]int64 // this interval's answers by hosting member
	lastOK    map[string]time.Time
	maxGap    map[string]time.Duration
	gapEnd    map[string]time.Time
	failFirst time.Time
	failLast  time.Time
}

func newLoadStats() *loadStats {
	return &loadStats{start: time.Now(), total: map[string]int64{}, samples: map[string]string{},
		texts: map[string]int64{}, interval: map[string]int64{}, byMember: map[string]int64{}, lastOK: map[string]time.Time{},
		maxGap: map[string]time.Duration{}, gapEnd: map[string]time.Time{}}
}

func (s *loadStats) record(id string, began, ended time.Time, v *Value, err error) {
	class := classify(err)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total[class]++
	s.interval[class]++
	if err != nil {
		if _, ok := s.samples[class]; !ok {
			s.samples[class] = err.Error()
		}
		if len(s.texts) < 64 {
			s.texts[identityText.ReplaceAllString(err.Error(), "ID")]++
		} else if _, ok := s.texts[identityText.ReplaceAllString(err.Error(), "ID")]; ok {
			s.texts[identityText.ReplaceAllString(err.Error(), "ID")]++
		}
		if s.failFirst.IsZero() {
			s.failFirst = began
		}
		s.failLast = ended
		return
	}
	d := ended.Sub(began)
	s.lat = append(s.lat, d)
	s.allLat = append(s.allLat, d)
	s.byMember[v.Member]++
	// The gap a grain's callers saw: from its previous answer (or, for
	// the first, nothing) to this one.
	if last, ok := s.lastOK[id]; ok {
		if g := ended.Sub(last); g > s.maxGap[id] {
			s.maxGap[id], s.gapEnd[id] = g, ended
		}
	}
	s.lastOK[id] = ended
}

func pct(l []time.Duration, p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	i := int(float64(len(l)-1) * p)
	return l[i]
}

// line returns this interval's progress line and starts the next.
func (s *loadStats) line(now time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	slices.Sort(s.lat)
	var b strings.Builder
	fmt.Fprintf(&b, "[%6.1fs] ok %6d", now.Sub(s.start).Seconds(), s.interval["ok"])
	for _, k := range sortedKeys(s.interval) {
		if k != "ok" {
			fmt.Fprintf(&b, "  %s %d", k, s.interval[k])
		}
	}
	fmt.Fprintf(&b, "  p50 %v p99 %v  by member", pct(s.lat, 0.5).Round(10*time.Microsecond), pct(s.lat, 0.99).Round(10*time.Microsecond))
	for _, k := range sortedKeys(s.byMember) {
		fmt.Fprintf(&b, " %s=%d", k, s.byMember[k])
	}
	clear(s.interval)
	clear(s.byMember)
	s.lat = s.lat[:0]
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// loadSummary is the driver's last line (JSON after "summary: ").
type loadSummary struct {
	Seconds   float64           `json:"seconds"`
	Total     map[string]int64  `json:"outcomes"`
	Samples   map[string]string `json:"error_samples,omitempty"`
	Texts     map[string]int64  `json:"error_texts,omitempty"`
	P50       string            `json:"p50"`
	P99       string            `json:"p99"`
	Max       string            `json:"max"`
	MaxGap    string            `json:"max_gap"`
	MaxGapID  string            `json:"max_gap_identity,omitempty"`
	GapsOver1 int               `json:"grains_with_gap_over_1s"`
	FailFirst string            `json:"first_failure,omitempty"`
	FailLast  string            `json:"last_failure,omitempty"`
}

func (s *loadStats) summary(now time.Time) loadSummary {
	s.mu.Lock()
	defer s.mu.Unlock()
	slices.Sort(s.allLat)
	sum := loadSummary{Seconds: now.Sub(s.start).Seconds(), Total: maps(s.total), Samples: s.samples, Texts: maps(s.texts),
		P50: pct(s.allLat, 0.5).String(), P99: pct(s.allLat, 0.99).String()}
	if len(s.allLat) > 0 {
		sum.Max = s.allLat[len(s.allLat)-1].String()
	}
	var maxGap time.Duration
	for id, g := range s.maxGap {
		if g > maxGap {
			maxGap, sum.MaxGapID = g, id
		}
		if g > time.Second {
			sum.GapsOver1++
		}
	}
	sum.MaxGap = maxGap.String()
	if !s.failFirst.IsZero() {
		sum.FailFirst = s.failFirst.Format(time.RFC3339Nano)
		sum.FailLast = s.failLast.Format(time.RFC3339Nano)
	}
	return sum
}

func maps(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// runLoad drives requests at the cluster from n (a client-only member)
// until ctx ends or o.duration passes, and writes progress lines and the
// summary to out. Requests in flight when it stops finish (each has its
// own deadline), so none is cut short and miscounted.
func runLoad(ctx context.Context, n *node, o loadOptions, out io.Writer) (loadSummary, error) {
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	err := n.c.WaitForMembers(wctx, o.waitMembers)
	cancel()
	if err != nil {
		return loadSummary{}, fmt.Errorf("ops: load: waiting for %d members: %w", o.waitMembers, err)
	}
	fmt.Fprintf(out, "load: %d members in view; %d workers, %d counters, %d sessions, request timeout %v\n",
		len(n.c.Members()), o.workers, o.grains, max(o.grains/4, 1), o.reqTimeout)
	stats := newLoadStats()
	var stop atomic.Bool
	var wg sync.WaitGroup
	var next atomic.Int64
	var limiter *rate.Limiter
	if o.rate > 0 {
		limiter = rate.NewLimiter(rate.Limit(o.rate), max(1, int(o.rate/100)))
	}
	for w := range o.workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for !stop.Load() {
				if limiter != nil && limiter.Wait(ctx) != nil {
					return
				}
				var id cluster.Identity
				var msg any
				switch {
				case o.fill > 0:
					i := next.Add(1) - 1
					if i >= int64(o.fill) {
						return
					}
					id, msg = cluster.NewIdentity(kindCounter, fmt.Sprintf("fill-%d", i)), &Add{}
				case r.IntN(5) == 0:
					id, msg = cluster.NewIdentity(kindSession, fmt.Sprintf("s-%d", r.IntN(max(o.grains/4, 1)))), &Touch{Page: "home"}
				default:
					id, msg = cluster.NewIdentity(kindCounter, fmt.Sprintf("c-%d", r.IntN(o.grains))), &Add{N: 1}
				}
				rctx, cancel := context.WithTimeout(context.Background(), o.reqTimeout)
				began := time.Now()
				v, err := cluster.Request[*Value](rctx, n.c, id, msg)
				cancel()
				stats.record(id.String(), began, time.Now(), v, err)
				if err == nil && o.answered != nil {
					select {
					case o.answered <- v.Member:
					default:
					}
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var timeout <-chan time.Time
	if o.duration > 0 {
		t := time.NewTimer(o.duration)
		defer t.Stop()
		timeout = t.C
	}
	tick := time.NewTicker(o.report)
	defer tick.Stop()
loop:
	for {
		select {
		case now := <-tick.C:
			fmt.Fprintln(out, stats.line(now))
		case <-ctx.Done():
			break loop
		case <-timeout:
			break loop
		case <-done:
			break loop
		}
	}
	stop.Store(true)
	<-done
	sum := stats.summary(time.Now())
	b, _ := json.Marshal(sum)
	fmt.Fprintf(out, "summary: %s\n", b)
	return sum, nil
}
