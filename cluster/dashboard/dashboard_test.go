package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/cluster/dashboard"
)

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, b
}

// The handler serves the embedded page and the state of the attached
// members: status, lease, activations by kind, request metrics and events.
func TestDashboardServesState(t *testing.T) {
	reg := steadyRegistry(t)
	a, b := startMember(t, reg, "a"), startMember(t, reg, "b")
	d := dashboard.New(dashboard.Config{Title: "unit", RateWindow: time.Nanosecond})
	t.Cleanup(d.Close)
	d.Attach(a.c, a.reader)
	d.Attach(b.c, nil)
	awaitMembers(t, 2, a, b)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for i := range 10 {
		_, err := cluster.Request[*Total](ctx, a.c, cluster.NewIdentity("counter", fmt.Sprint(i)), &Add{N: 1})
		require.NoError(t, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/dash/", http.StripPrefix("/dash", d))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	resp, page := get(t, srv.URL+"/dash/")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Type"), "text/html")
	require.Contains(t, string(page), `fetch("api/state"`)
	require.NotContains(t, string(page), "http://", "the page loads nothing from elsewhere")
	require.NotContains(t, string(page), "https://", "the page loads nothing from elsewhere")

	_, body := get(t, srv.URL+"/dash/api/state") // opens the rate window
	_, body = get(t, srv.URL+"/dash/api/state")
	var st dashboard.State
	require.NoError(t, json.Unmarshal(body, &st))
	require.Equal(t, "unit", st.Title)
	require.Len(t, st.Members, 2)
	byID := map[string]dashboard.MemberState{}
	active := 0
	for _, m := range st.Members {
		byID[m.ID] = m
		active += m.Active
		require.True(t, m.Local)
		require.True(t, m.InView)
		require.Equal(t, "ready", m.Status)
		require.Equal(t, "held", m.Lease)
		require.Positive(t, m.LeaseLeftMs)
		require.Equal(t, m.Active, m.ActiveKinds["counter"])
	}
	require.Equal(t, 10, active)
	require.True(t, byID["a"].Metrics)
	require.Equal(t, uint64(10), byID["a"].Requests)
	require.False(t, byID["b"].Metrics)
	require.NotEmpty(t, st.Events)
	topo := false
	for _, ev := range st.Events {
		topo = topo || ev.Type == "topology"
	}
	require.True(t, topo, "topology changes are listed: %+v", st.Events)

	resp, _ = get(t, srv.URL+"/dash/nope")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestLatencyBucketsAscend(t *testing.T) {
	b := dashboard.LatencyBuckets()
	require.Greater(t, len(b), 20)
	for i := 1; i < len(b); i++ {
		require.Greater(t, b[i], b[i-1])
	}
	require.True(t, strings.HasPrefix(fmt.Sprint(b[0]), "5e-05"))
}

// The event log is bounded in bytes, not only in count: event texts carry
// identities and errors, which are user data of any size. Before, 100
// activation failures with a 64 KiB error each kept 6.4 MB and sent it on
// every poll.
func TestDashboardEventTextsBounded(t *testing.T) {
	huge := strings.Repeat("x", 64<<10)
	broken := cluster.NewKind("broken", actor.PropsFromProducer(func() actor.Actor { panic("test: " + huge) }))
	a := startMember(t, steadyRegistry(t), "a", broken)
	awaitMembers(t, 1, a)
	d := dashboard.New(dashboard.Config{Events: 20})
	t.Cleanup(d.Close)
	d.Attach(a.c, nil)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for i := range 25 {
		_, err := cluster.Request[*Total](ctx, a.c, cluster.NewIdentity("broken", fmt.Sprint(i, "-", huge)), &Add{N: 1})
		var af *cluster.ActivationFailedError
		require.ErrorAs(t, err, &af)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	_, body := get(t, srv.URL+"/api/state")
	var st dashboard.State
	require.NoError(t, json.Unmarshal(body, &st))
	failed := 0
	for _, ev := range st.Events {
		require.LessOrEqual(t, len(ev.Text), 512, "event %s text of %d bytes", ev.Type, len(ev.Text))
		require.True(t, utf8.ValidString(ev.Text))
		if ev.Type == "activation-failed" {
			failed++
			require.True(t, strings.HasSuffix(ev.Text, "…"), "the cut is marked")
		}
	}
	require.Equal(t, 20, len(st.Events), "the ring is full")
	require.Positive(t, failed)
	require.Less(t, len(body), 64<<10, "the whole state is small")
}

// Config.Events is a bound, not an allocation: "keep them all"
// (math.MaxInt) works. Before, New allocated the whole ring up front and
// panicked (makeslice: cap out of range); a large value that fit took its
// memory at once.
func TestDashboardLargeEventsBound(t *testing.T) {
	var d *dashboard.Dashboard
	require.NotPanics(t, func() { d = dashboard.New(dashboard.Config{Events: math.MaxInt}) })
	t.Cleanup(d.Close)
	a := startMember(t, steadyRegistry(t), "a")
	awaitMembers(t, 1, a)
	d.Attach(a.c, nil)
	st := d.State(context.Background())
	require.Len(t, st.Events, 1, "the view at attach")
}

// After a fence the member rejoins under a new incarnation while the
// registry keeps its previous one in the view until that lease expires. The
// state marks the older row Superseded (the page shows it as "previous
// incarnation" and does not count it); before, it was a second member.
func TestDashboardMarksPreviousIncarnation(t *testing.T) {
	// A long lease keeps the previous incarnation in the view while the
	// test looks; the fence period is short so the member fences soon.
	reg, err := cluster.NewMemoryRegistry(cluster.MemoryConfig{LeaseTTL: time.Minute,
		RenewInterval: 100 * time.Millisecond, FencePeriod: time.Second})
	require.NoError(t, err)
	t.Cleanup(reg.Close)
	a, b := startMember(t, reg, "a"), startMember(t, reg, "b")
	awaitMembers(t, 2, a, b)
	d := dashboard.New(dashboard.Config{})
	t.Cleanup(d.Close)
	d.Attach(a.c, nil)
	d.Attach(b.c, nil)
	old := b.c.Self()

	both := make(chan struct{}, 1)
	sub := actor.Subscribe(a.sys.EventStream(), func(ev *cluster.TopologyChanged) {
		n := 0
		for _, m := range ev.Members {
			if m.ID == "b" {
				n++
			}
		}
		if n == 2 {
			select {
			case both <- struct{}{}:
			default:
			}
		}
	})
	t.Cleanup(func() { a.sys.EventStream().Unsubscribe(sub) })
	reg.Partition(old.Key()) // b's renewals fail: it fences and rejoins
	select {
	case <-both:
	case <-time.After(wait):
		t.Fatalf("a never saw two incarnations of b: %v", a.c.Members())
	}
	awaitReady(t, b)
	require.Greater(t, b.c.Self().Incarnation, old.Incarnation)

	st := d.State(context.Background())
	rows := map[string]dashboard.MemberState{}
	for _, m := range st.Members {
		rows[m.Key] = m
	}
	require.Len(t, rows, 3, "a, b and b's previous incarnation: %+v", st.Members)
	prev, ok := rows[old.Key()]
	require.True(t, ok, "the previous incarnation is listed: %+v", st.Members)
	require.True(t, prev.Superseded)
	require.True(t, prev.InView)
	require.False(t, rows[b.c.Self().Key()].Superseded)
	require.False(t, rows[a.c.Self().Key()].Superseded)
}
