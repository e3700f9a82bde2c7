package clusterbench

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// Each benchmark starts one cluster per implementation (three members in
// this process, loopback TCP) and reuses it across the b.N calibration
// rounds; the parent's cleanup stops it. B/op and allocs/op count the whole
// process: caller, both members' remotes and the grain.

// benchCluster runs one sub-benchmark per implementation, named impl=NAME.
func benchCluster(b *testing.B, opts Options, impls []string, run func(b *testing.B, c Cluster)) {
	for _, impl := range impls {
		var c Cluster
		b.Run("impl="+impl, func(sub *testing.B) {
			if c == nil {
				var err error
				if c, err = Start(impl, opts); err != nil {
					sub.Fatal(err)
				}
				b.Cleanup(func() {
					// 100,000 idle grains take longer than readyLimit to stop here.
					ctx, cancel := context.WithTimeout(context.Background(), 5*readyLimit)
					defer cancel()
					if err := c.Close(ctx); err != nil {
						b.Error(err)
					}
				})
			}
			run(sub, c)
		})
	}
}

func reportLatency(b *testing.B, lat []time.Duration) {
	p50, p99 := percentiles(lat)
	b.ReportMetric(float64(p50.Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(p99.Nanoseconds()), "p99-ns")
}

// BenchmarkClusterWarmRTT: sequential requests from member 0 to one warm
// grain on member 1 (kind=grain), next to plain remote requests from member
// 0 to an ordinary echo actor on member 1 (kind=remote), in the same
// cluster. ns/op is the mean round trip.
//
//	go test -run '^$' -bench ClusterWarmRTT -benchtime 2s ./cluster/
func BenchmarkClusterWarmRTT(b *testing.B) {
	benchCluster(b, Options{}, impls, func(b *testing.B, c Cluster) {
		ctx := context.Background()
		id, err := IdentityOwnedBy(c, 0, 1, "warm")
		if err != nil {
			b.Fatal(err)
		}
		msg := payload()
		calls := map[string]func(context.Context) error{
			"grain":  func(ctx context.Context) error { return c.Request(ctx, 0, id, msg) },
			"remote": func(ctx context.Context) error { return c.RemoteRequest(ctx, 0, 1, msg) },
		}
		for _, kind := range []string{"grain", "remote"} {
			call := calls[kind]
			b.Run("kind="+kind, func(b *testing.B) {
				if err := RoundTrips(ctx, make([]time.Duration, 16), call); err != nil { // warm
					b.Fatal(err)
				}
				lat := make([]time.Duration, b.N)
				b.ReportAllocs()
				b.ResetTimer()
				err := RoundTrips(ctx, lat, call)
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				reportLatency(b, lat)
			})
		}
	})
}

// BenchmarkClusterCold: the first request to a new identity from member 0,
// owner local (member 0) or remote (another member). ns/op is the mean;
// p50-ns and p99-ns the percentiles. Every op activates one more grain, for
// both implementations alike. Before the first timed op, one identity owned
// by each member is activated untimed: a fraktor-go member that joined an
// existing cluster grants nothing until the handover barrier's wait-out has
// passed or a member vouched for it (docs/cluster.md), which is start-up
// time, not activation time.
//
//	go test -run '^$' -bench ClusterCold -benchtime 2000x ./cluster/
func BenchmarkClusterCold(b *testing.B) {
	benchCluster(b, Options{PidCacheCapacity: 1 << 17}, impls, func(b *testing.B, c Cluster) {
		if err := awaitGrants(c); err != nil {
			b.Fatal(err)
		}
		for _, local := range []bool{true, false} {
			name := "owner=remote"
			if local {
				name = "owner=local"
			}
			round := 0
			b.Run(name, func(b *testing.B) {
				round++
				prefix := fmt.Sprintf("cold-%s-%d", name, round)
				ids, err := ColdIdentities(c, 0, local, prefix, b.N)
				if err != nil {
					b.Fatal(err)
				}
				lat := make([]time.Duration, b.N)
				b.ReportAllocs()
				b.ResetTimer()
				err = Cold(context.Background(), c, 0, ids, lat)
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				reportLatency(b, lat)
			})
		}
	})
}

// BenchmarkClusterThroughput: 8 callers on every member, requests spread
// over 10,000 identities (activated before the timer starts). ns/op is per
// request; req/s the aggregate rate.
//
//	go test -run '^$' -bench ClusterThroughput -benchtime 3s ./cluster/
func BenchmarkClusterThroughput(b *testing.B) {
	const perMember, identities = 8, 10000
	benchCluster(b, Options{PidCacheCapacity: 1 << 15}, impls, func(b *testing.B, c Cluster) {
		ids := Identities("tp", identities)
		ctx := context.Background()
		if _, err := Throughput(ctx, c, ids, perMember, 3*len(ids)); err != nil { // activate, fill every cache
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		got, err := Throughput(ctx, c, ids, perMember, b.N)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if got != b.N {
			b.Fatalf("%d of %d requests answered", got, b.N)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	})
}

// BenchmarkClusterIdleGrain: heap in use per idle activated grain, 100,000
// grains on a one-member fraktor-go cluster (BENCH_QUICK=1: 10,000). Run it
// with -benchtime 1x: every op activates the whole set again under new
// names, so the heap grows with b.N.
//
//	go test -run '^$' -bench ClusterIdleGrain -benchtime 1x ./cluster/
func BenchmarkClusterIdleGrain(b *testing.B) {
	n := 100000
	if os.Getenv("BENCH_QUICK") != "" {
		n = 10000
	}
	benchCluster(b, Options{Members: 1, PidCacheCapacity: 1 << 17}, []string{ImplFraktor}, func(b *testing.B, c Cluster) {
		for i := 0; b.Loop(); i++ {
			per, err := IdleBytes(context.Background(), c, Identities(fmt.Sprintf("idle-%d-%d", b.N, i), n), 8)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(per, "B/grain")
		}
	})
}

// awaitGrants activates, untimed, one identity owned by each member, so that
// every member grants activations before a timed op.
func awaitGrants(c Cluster) error {
	ctx, cancel := context.WithTimeout(context.Background(), readyLimit)
	defer cancel()
	msg := payload()
	for m := range c.Members() {
		id, err := IdentityOwnedBy(c, 0, m, "ready")
		if err != nil {
			return err
		}
		for ctx.Err() == nil {
			if err = c.Request(ctx, 0, id, msg); err == nil {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("member %d grants nothing: %w", m, err)
		}
	}
	return nil
}
