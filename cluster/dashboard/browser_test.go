package dashboard_test

import (
	"context"
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

// do runs actions with a deadline.
func (b browser) do(t *testing.T, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, wait)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, actions...), what)
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
	bin := chromium()
	if bin == "" && os.Getenv("FRAKTOR_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("dashboard: no Chromium on PATH and FRAKTOR_REQUIRE_CHROMIUM=1 (CI): install the chromium package")
	}
	if bin == "" {
		t.Skip("dashboard: no Chromium on PATH (Debian: apt-get install chromium; make test installs it); the browser test cannot run")
	}
	reg := fastRegistry(t)
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

	// Load: every member calls new identities, so activations keep growing.
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
	b.do(t, "three members with activations",
		until(rows+`.length === 3 && `+rows+`.every(r => +r.querySelector('.active').textContent > 0)`))
	require.Equal(t, []string{"m1", "m2", "m3"}, eval[[]string](t, b, rows+`.map(r => r.dataset.member).sort()`))
	before := eval[int](t, b, `+document.getElementById('c-active').textContent`)
	require.Positive(t, before)
	b.do(t, "counts update", until(fmt.Sprintf(`+document.getElementById('c-active').textContent > %d`, before)))

	close(callers["m3"])
	kill(reg, gate, m3)
	b.do(t, "the killed member is shown gone",
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
	bin := chromium()
	if bin == "" && os.Getenv("FRAKTOR_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("dashboard: no Chromium on PATH and FRAKTOR_REQUIRE_CHROMIUM=1 (CI): install the chromium package")
	}
	if bin == "" {
		t.Skip("dashboard: no Chromium on PATH (Debian: apt-get install chromium; make test installs it); the browser test cannot run")
	}
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
	b.do(t, "connected", until(updated+`.textContent.startsWith('updated')`))
	require.NotContains(t, eval[string](t, b, updated+`.className`), "err")
	down.Store(true)
	b.do(t, "disconnected", until(updated+`.textContent.startsWith('disconnected')`))
	require.Contains(t, eval[string](t, b, updated+`.className`), "err")
	down.Store(false)
	b.do(t, "connected again", until(updated+`.textContent.startsWith('updated')`))
	require.NotContains(t, eval[string](t, b, updated+`.className`), "err", "the error colour ends with the error")
}
