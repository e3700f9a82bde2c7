package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/cluster/dashboard"
	"github.com/fraktor-go/fraktor/remote"
)

// serveHTTP serves /metrics (a text exposition of the OpenTelemetry
// instruments, the membership lease, remote's counters and the Go
// runtime's memory; /metrics?gc=1 collects garbage first), /healthz, /readyz and the dashboard at /dashboard/.
func (n *node) serveHTTP() error {
	ln, err := net.Listen("tcp", n.o.httpAddr)
	if err != nil {
		return fmt.Errorf("ops: http listen %s: %w", n.o.httpAddr, err)
	}
	n.httpLn = ln
	n.dash = dashboard.New(dashboard.Config{Title: "ops " + n.o.cluster})
	n.dash.Attach(n.c, n.reader)
	mux := http.NewServeMux()
	mux.Handle("/dashboard/", http.StripPrefix("/dashboard", n.dash))
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if r.URL.Query().Get("gc") == "1" {
			runtime.GC() // for capacity measurements: the heap without garbage
		}
		n.writeMetrics(r.Context(), w)
	})
	// Liveness: the process serves HTTP and its cluster has not stopped.
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if st := n.c.Status(); st == cluster.StatusStopped {
			http.Error(w, st.String(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	// Readiness: Ready (a view, a valid lease); a load balancer sends
	// traffic to this member only then.
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		st := n.c.Status()
		if st != cluster.StatusReady {
			http.Error(w, st.String(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintf(w, "%s members=%d\n", st, len(n.c.Members()))
	})
	n.httpSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = n.httpSrv.Serve(ln) }()
	return nil
}

// writeMetrics writes one line per data point: name{attrs} value. Names
// keep their OpenTelemetry spelling with '.' → '_'.
func (n *node) writeMetrics(ctx context.Context, w io.Writer) {
	var rm metricdata.ResourceMetrics
	if err := n.reader.Collect(ctx, &rm); err != nil {
		fmt.Fprintf(w, "# collect error: %v\n", err)
	}
	var lines []string
	add := func(name string, set attribute.Set, v any) {
		lines = append(lines, fmt.Sprintf("%s%s %v", promName(name), labels(set), v))
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					add(m.Name, dp.Attributes, dp.Value)
				}
			case metricdata.Sum[float64]:
				for _, dp := range d.DataPoints {
					add(m.Name, dp.Attributes, dp.Value)
				}
			case metricdata.Gauge[int64]:
				for _, dp := range d.DataPoints {
					add(m.Name, dp.Attributes, dp.Value)
				}
			case metricdata.Gauge[float64]:
				for _, dp := range d.DataPoints {
					add(m.Name, dp.Attributes, dp.Value)
				}
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					add(m.Name+"_count", dp.Attributes, dp.Count)
					add(m.Name+"_sum", dp.Attributes, dp.Sum)
				}
			}
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	// What the instruments do not carry.
	now := time.Now()
	lease := n.c.Lease()
	fmt.Fprintf(w, "ops_cluster_status{status=%q} %d\n", n.c.Status().String(), int(n.c.Status()))
	fmt.Fprintf(w, "ops_cluster_members %d\n", len(n.c.Members()))
	fmt.Fprintf(w, "ops_cluster_lease_status{status=%q} %d\n", lease.Status.String(), int(lease.Status))
	fmt.Fprintf(w, "ops_cluster_lease_remaining_seconds %.3f\n", lease.Remaining(now).Seconds())
	fmt.Fprintf(w, "ops_cluster_lease_renewal_failures %d\n", lease.Failures)
	if r := remote.Get(n.sys); r != nil {
		s := r.Node().Stats()
		fmt.Fprintf(w, "ops_remote_connections %d\n", s.Connections)
		fmt.Fprintf(w, "ops_remote_handshakes_refused %d\n", s.HandshakesRefused)
		fmt.Fprintf(w, "ops_remote_handshakes_duplicate %d\n", s.HandshakesDuplicate)
		fmt.Fprintf(w, "ops_remote_undelivered %d\n", s.Undelivered)
		fmt.Fprintf(w, "ops_remote_queue_full %d\n", s.QueueFull)
		fmt.Fprintf(w, "ops_remote_queued_bytes %d\n", s.QueuedBytes)
		fmt.Fprintf(w, "ops_remote_backlog_refused %d\n", s.BacklogRefused)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Fprintf(w, "go_memstats_heap_inuse_bytes %d\n", ms.HeapInuse)
	fmt.Fprintf(w, "go_memstats_heap_alloc_bytes %d\n", ms.HeapAlloc)
	fmt.Fprintf(w, "go_memstats_sys_bytes %d\n", ms.Sys)
	fmt.Fprintf(w, "go_goroutines %d\n", runtime.NumGoroutine())
}

func promName(s string) string { return strings.ReplaceAll(s, ".", "_") }

func labels(set attribute.Set) string {
	if set.Len() == 0 {
		return ""
	}
	parts := make([]string, 0, set.Len())
	for _, kv := range set.ToSlice() {
		parts = append(parts, fmt.Sprintf("%s=%q", promName(string(kv.Key)), kv.Value.Emit()))
	}
	return "{" + strings.Join(parts, ",") + "}"
}
