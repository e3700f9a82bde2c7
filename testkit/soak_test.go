package testkit_test

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/testkit"
)

var (
	soakFor   = flag.Duration("testkit.soak", 0, "run TestClusterSoak for this long (0: skip it)")
	soakSlack = flag.Duration("testkit.soak.slack", 0, "TestClusterSoak's LeaseSlack (0: the default timing)")
)

// TestClusterSoak keeps a three-member cluster on the system clock busy
// with requests for -testkit.soak and fails if a member fenced itself or a
// request failed: a live member fences only when its lease renewals ran
// later than the lease slack allows, which is what a loaded machine does
// to timers. It logs how late a 100 ms timer of the same process ran,
// the quantity that the slack must outlast (docs/testing.md, "Lease timing
// on a loaded machine"). Run it beside a load, for example
//
//	for i in $(seq 16); do yes >/dev/null & done
//	go test -race -run TestClusterSoak ./testkit/ -testkit.soak=15s [-testkit.soak.slack=200ms]
//	kill %1 %2 ... (every yes)
func TestClusterSoak(t *testing.T) {
	if *soakFor <= 0 {
		t.Skip("a soak test: run it with -testkit.soak=15s")
	}
	opts := []testkit.ClusterOption{testkit.Nodes(3), testkit.Kinds(plainCounter()), testkit.Serializers(counterMessages)}
	if *soakSlack > 0 {
		opts = append(opts, testkit.LeaseSlack(*soakSlack))
	}
	tc := testkit.NewCluster(t, opts...)
	lt := tc.Registry().LeaseTiming()
	var timing cluster.Config
	testkit.FastTiming(&timing)
	var fenced atomic.Int64
	for i := range 3 {
		es := tc.System(i).EventStream()
		sub := actor.Subscribe(es, func(*cluster.Fenced) { fenced.Add(1) })
		defer es.Unsubscribe(sub)
	}

	// A chain of 100 ms timers, as the registry's renewals are: how late
	// each one ran.
	var (
		mu   sync.Mutex
		late []time.Duration
	)
	stop := make(chan struct{})
	timersDone := make(chan struct{})
	var arm func(at time.Time)
	arm = func(at time.Time) {
		time.AfterFunc(100*time.Millisecond, func() {
			now := time.Now()
			mu.Lock()
			late = append(late, now.Sub(at)-100*time.Millisecond)
			mu.Unlock()
			select {
			case <-stop:
				close(timersDone)
			default:
				arm(now)
			}
		})
	}
	arm(time.Now())

	var requests, failures atomic.Int64
	var firstErr atomic.Pointer[string]
	var callers sync.WaitGroup
	for m := range 3 {
		for c := range 2 {
			callers.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					// The cluster's default deadline: a fresh cluster's
					// first call to a grain may wait out its owner's
					// first wait-out W (1225 ms with FastRegistry).
					ctx, cancel := context.WithTimeout(context.Background(), cluster.DefaultConfig().RequestTimeout)
					id := cluster.NewIdentity("counter", fmt.Sprint(m, "-", c, "-", i%200))
					_, err := cluster.Request[*total](ctx, tc.Node(m), id, &addReq{N: 1})
					cancel()
					requests.Add(1)
					if err != nil {
						failures.Add(1)
						msg := fmt.Sprintf("%v at %v", err, time.Now().Format("15:04:05.000"))
						firstErr.CompareAndSwap(nil, &msg)
					}
				}
			})
		}
	}
	<-time.After(*soakFor) // the soak's length, not a wait for an event
	close(stop)
	callers.Wait()
	<-timersDone

	mu.Lock()
	defer mu.Unlock()
	slices.Sort(late)
	n := len(late)
	t.Logf("lease: renew %v, fence %v, TTL %v (slack %v); %d requests, %d failed; %d Fenced; 100 ms timer late by: median %v, p99 %v, max %v (%d timers)",
		lt.RenewInterval, lt.FencePeriod, lt.LeaseTTL, lt.FencePeriod-lt.RenewInterval-timing.StopBudget,
		requests.Load(), failures.Load(), fenced.Load(), late[n/2], late[n*99/100], late[n-1], n)
	if e := firstErr.Load(); e != nil {
		t.Logf("first failed request: %s", *e)
	}
	if fenced.Load() > 0 || failures.Load() > 0 {
		t.Errorf("%d Fenced events and %d failed requests in %v on live members", fenced.Load(), failures.Load(), *soakFor)
	}
}
