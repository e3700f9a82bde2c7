package dashboard_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/cluster/dashboard"
)

var screenshot = flag.String("screenshot", "", "write a PNG of the dashboard, as the browser test shows it after the kill, to this path (docs/dashboard.png is made with: go test -run TestDashboardInBrowser ./cluster/dashboard/ -args -screenshot ../../docs/dashboard.png)")

// chromium finds a Chromium or Chrome binary on PATH.
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// needChromium returns the Chromium binary, or skips the test when there
// is none, unless FRAKTOR_REQUIRE_CHROMIUM=1 (CI), where it fails it.
func needChromium(t *testing.T) string {
	t.Helper()
	bin := chromium()
	if bin == "" && os.Getenv("FRAKTOR_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("dashboard: no Chromium on PATH and FRAKTOR_REQUIRE_CHROMIUM=1 (CI): install the chromium package")
	}
	if bin == "" {
		t.Skip("dashboard: no Chromium on PATH (Debian: apt-get install chromium; make test installs it); the browser test cannot run")
	}
	return bin
}

// Browser is a headless Chromium page; Close ends the browser process.
type browser struct {
	ctx   context.Context
	close func()
}

func newBrowser(t *testing.T, bin string) browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 860),
	)
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	return browser{ctx: bctx, close: func() { bcancel(); acancel() }}
}

// do runs actions with a deadline. On failure it logs what the page shows
// and, when state is not nil, what the dashboard reports now.
func (b browser) do(t *testing.T, what string, state func() any, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, wait)
	defer cancel()
	err := chromedp.Do(ctx, actions...)
	if err != nil {
		b.logPage(t)
		if state != nil {
			js, _ := json.MarshalIndent(state(), "", " ")
			t.Logf("dashboard state now: %s", js)
		}
	}
	require.NoError(t, err, what)
}

// logPage logs the page's text, for a failure message.
func (b browser) logPage(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	t.Logf("page (err %v):\n%s", err, text)
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, b browser, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, wait)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(t, err, expr)
	return v
}

// until waits (in the page, without sleeping here) until expr is true.
func until(expr string) chromedp.Action[chromedp.Void] {
	poll := chromedp.Poll[bool](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(wait))
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := poll(ctx, t)
		return chromedp.Void{}, err
	}
}

// The page in a real browser: three members with activations appear, the
// counts update under load, and a member killed abruptly is shown gone.
func TestDashboardInBrowser(t *testing.T) {
	bin := needChromium(t)
	reg := steadyRegistry(t)
	gate := &joinGate{Provider: reg}
	m1, m2, m3 := startMember(t, reg, "m1"), startMember(t, reg, "m2"), startMember(t, gate, "m3")
	nodes := []node{m1, m2, m3}
	awaitMembers(t, 3, nodes...)
	d := dashboard.New(dashboard.Config{})
	t.Cleanup(d.Close)
	for _, nd := range nodes {
		d.Attach(nd.c, nd.reader)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)

	// Load: every member calls 2000 identities of its own, round and
	// round, so the page has requests to show. Activations stop growing
	// once all 6000 run (in well under a second without the race detector):
	// the growth the page must show comes from the test's own calls below.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	callers := map[string]chan struct{}{}
	for _, nd := range nodes {
		quit := make(chan struct{})
		callers[nd.c.Self().ID] = quit
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-quit:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				_, _ = cluster.Request[*Total](ctx, nd.c, cluster.NewIdentity("counter", fmt.Sprintf("%s-%d", nd.c.Self().ID, i%2000)), &Add{N: 1})
				cancel()
			}
		})
	}
	t.Cleanup(func() { close(stop); wg.Wait() })

	b := newBrowser(t, bin)
	defer b.close()
	// The first action starts the browser: it runs without a deadline, as
	// a deadline on it would end the browser.
	_, err := chromedp.Run(b.ctx, chromedp.Navigate(srv.URL))
	require.NoError(t, err)
	rows := `[...document.querySelectorAll('#members tr[data-member]')]`
	state := func() any {
		views := map[string][]string{}
		for _, nd := range nodes {
			for _, m := range nd.c.Members() {
				views[nd.c.Self().Key()] = append(views[nd.c.Self().Key()], m.Key())
			}
		}
		return map[string]any{"views": views, "state": d.State(context.Background())}
	}
	// One condition, read from one rendering: a check after it would read
	// a later one.
	b.do(t, "three members with activations", state,
		until(rows+`.map(r => r.dataset.member).sort().join() === 'm1,m2,m3' && `+
			rows+`.every(r => +r.querySelector('.active').textContent > 0)`))
	before := eval[int](t, b, `+document.getElementById('c-active').textContent`)
	require.Positive(t, before)
	// Activations that did not run when the page showed before: the page
	// must show at least that many more. Waiting for the load to raise the
	// count failed once its identities all ran and the count stood still
	// (5 of 30 runs at load 13 without -race).
	const fresh = 20
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for i := range fresh {
		_, err := cluster.Request[*Total](ctx, m1.c, cluster.NewIdentity("counter", fmt.Sprint("fresh-", i)), &Add{N: 1})
		require.NoError(t, err)
	}
	b.do(t, "counts update", state, until(fmt.Sprintf(`+document.getElementById('c-active').textContent >= %d`, before+fresh)))

	close(callers["m3"])
	kill(reg, gate, m3)
	// The cluster notices first (m3's lease expires in the registry), then
	// the page shows it: each step has its own budget.
	awaitMembers(t, 2, m1, m2)
	b.do(t, "the killed member is shown gone", state,
		until(`(document.querySelector('#members tr[data-member="m3"] .state')?.textContent ?? '').startsWith('gone') && document.getElementById('c-members').textContent === '2'`))
	require.Contains(t, eval[string](t, b, `document.querySelector('#members tr[data-member="m3"] .state').textContent`), "gone")
	if *screenshot != "" {
		ctx, cancel := context.WithTimeout(b.ctx, wait)
		defer cancel()
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG; lower is JPEG
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(*screenshot, png, 0o644))
		t.Logf("screenshot written to %s", *screenshot)
	}
}

// When the state cannot be fetched (the process is shutting down, the
// server restarts) the page says "disconnected" in red; when it can again,
// the page says when it was updated, no longer in red. Before, the red
// class stayed for good after the first failed poll.
func TestDashboardPageRecoversFromDisconnect(t *testing.T) {
	bin := needChromium(t)
	d := dashboard.New(dashboard.Config{})
	t.Cleanup(d.Close)
	var down atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() && r.URL.Path == "/api/state" {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		d.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	b := newBrowser(t, bin)
	defer b.close()
	_, err := chromedp.Run(b.ctx, chromedp.Navigate(srv.URL))
	require.NoError(t, err)
	updated := `document.getElementById('updated')`
	b.do(t, "connected", nil, until(updated+`.textContent.startsWith('updated')`))
	require.NotContains(t, eval[string](t, b, updated+`.className`), "err")
	down.Store(true)
	b.do(t, "disconnected", nil, until(updated+`.textContent.startsWith('disconnected')`))
	require.Contains(t, eval[string](t, b, updated+`.className`), "err")
	down.Store(false)
	b.do(t, "connected again", nil, until(updated+`.textContent.startsWith('updated')`))
	require.NotContains(t, eval[string](t, b, updated+`.className`), "err", "the error colour ends with the error")
}

// A poll that gets no answer (the process is stopped in a debugger or by
// SIGSTOP: the kernel still accepts the connection) ends after
// the page's poll timeout and the page says "disconnected"; when answers
// come again, it recovers. Before, the page waited for that answer for
// good: it kept showing the last state and "updated <time>", in the
// normal colour, as if it were live.
func TestDashboardPageShowsStalledPoll(t *testing.T) {
	bin := needChromium(t)
	d := dashboard.New(dashboard.Config{})
	t.Cleanup(d.Close)
	var stalled atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if stalled.Load() && r.URL.Path == "/api/state" {
			<-r.Context().Done() // the page gives up and closes the connection
			return
		}
		d.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	b := newBrowser(t, bin)
	defer b.close()
	_, err := chromedp.Run(b.ctx, chromedp.Navigate(srv.URL))
	require.NoError(t, err)
	updated := `document.getElementById('updated')`
	b.do(t, "connected", nil, until(updated+`.textContent.startsWith('updated')`))
	stalled.Store(true)
	b.do(t, "a stalled poll shows disconnected", nil, until(updated+`.textContent.startsWith('disconnected')`))
	require.Contains(t, eval[string](t, b, updated+`.className`), "err")
	stalled.Store(false)
	b.do(t, "connected again", nil, until(updated+`.textContent.startsWith('updated')`))
}

// A superseded row (a member's previous incarnation, still in the view
// until its lease expires) reads "previous incarnation", is dimmed and is
// not counted among the members in view.
func TestDashboardPageShowsPreviousIncarnation(t *testing.T) {
	bin := needChromium(t)
	d := dashboard.New(dashboard.Config{})
	t.Cleanup(d.Close)
	st := dashboard.State{Title: "incarnations", Now: time.Now(), Members: []dashboard.MemberState{
		{ID: "a", Key: "a/1", Incarnation: 1, Local: true, InView: true, Status: "ready", Lease: "held"},
		{ID: "b", Key: "b/2", Incarnation: 2, Local: true, InView: true, Status: "ready", Lease: "held"},
		{ID: "b", Key: "b/1", Incarnation: 1, InView: true, Status: "in view", Superseded: true},
	}}
	body, err := json.Marshal(st)
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/state" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
			return
		}
		d.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	b := newBrowser(t, bin)
	defer b.close()
	_, err = chromedp.Run(b.ctx, chromedp.Navigate(srv.URL))
	require.NoError(t, err)
	b.do(t, "three rows", nil, until(`document.querySelectorAll('#members tr').length === 3`))
	require.Equal(t, "2", eval[string](t, b, `document.getElementById('c-members').textContent`))
	rows := eval[[]string](t, b, `[...document.querySelectorAll('#members tr')].map(r => r.className + '|' + r.innerText)`)
	require.Len(t, rows, 3)
	require.NotContains(t, rows[0]+rows[1], "previous incarnation")
	require.Regexp(t, `^row-gone\|`, rows[2])
	require.Contains(t, rows[2], "previous incarnation")
}
