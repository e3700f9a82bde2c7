package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/internal/testconsul"
	"github.com/fraktor-go/fraktor/remote"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testOptions are a member's options in the tests: mutual TLS with the
// certificates in dir, the short Consul timing of docs/membership.md.
func testOptions(agent *testconsul.Agent, dir, name string) nodeOptions {
	return nodeOptions{
		name: name, listen: "127.0.0.1:0", cluster: "ops", consul: agent.Address(),
		tlsCert: filepath.Join(dir, name+".pem"), tlsKey: filepath.Join(dir, name+"-key.pem"), tlsCA: filepath.Join(dir, "ca.pem"),
		httpAddr: "127.0.0.1:0", hostKinds: true, shutdownTimeout: 10 * time.Second, sessionIdle: time.Minute,
		consulTTL: 3 * time.Second, consulRenew: 500 * time.Millisecond, consulRequestTimeout: time.Second, consulFence: 2 * time.Second,
	}
}

// activationOn returns a channel that receives once n hosts a grain.
func activationOn(n *node) <-chan struct{} {
	ch := make(chan struct{}, 1)
	actor.Subscribe(n.sys.EventStream(), func(*cluster.ActivationStarted) {
		select {
		case ch <- struct{}{}:
		default:
		}
	})
	return ch
}

func await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: not within 30 s", what)
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// Three members and a load driver over mutual TLS, meeting through a real
// Consul agent; each member is shut down gracefully and started again in
// turn while the load runs: no request fails, and each restarted member
// hosts grains again. Then the operator's mistakes: a member with a
// certificate of another CA, and a second member on a taken address.
func TestOpsRollingRestartUnderLoad(t *testing.T) {
	agent := testconsul.Start(t)
	ctx := context.Background()
	dir := t.TempDir()
	var out strings.Builder
	require.Equal(t, 0, run(ctx, []string{"certs", "--dir", dir, "--names", "m1,m2,m3,load"}, &out, &out), out.String())
	rogueCA, err := newCA("another CA")
	require.NoError(t, err)
	rogueDir := t.TempDir()
	require.NoError(t, writeCerts(rogueDir, rogueCA, []string{"rogue"}, nil))

	log, err := newLogger(io.Discard, "info")
	require.NoError(t, err)
	members := make([]*node, 3)
	for i := range members {
		members[i], err = startNode(ctx, testOptions(agent, dir, fmt.Sprintf("m%d", i+1)), log)
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		for _, m := range members {
			if m != nil {
				require.NoError(t, m.close(ctx))
			}
		}
	})
	hosted := make([]<-chan struct{}, 3)
	for i, m := range members {
		hosted[i] = activationOn(m)
	}
	lo := testOptions(agent, dir, "load")
	lo.hostKinds, lo.httpAddr = false, ""
	driver, err := startNode(ctx, lo, log)
	require.NoError(t, err)
	defer func() { require.NoError(t, driver.close(ctx)) }()

	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	type result struct {
		sum loadSummary
		err error
	}
	done := make(chan result, 1)
	answered := make(chan string, 1024)
	go func() {
		sum, err := runLoad(loadCtx, driver, loadOptions{grains: 60, workers: 4, reqTimeout: 10 * time.Second,
			waitMembers: 4, report: time.Hour, answered: answered}, io.Discard)
		done <- result{sum, err}
	}()
	// answersFrom waits until n more requests were answered by member.
	answersFrom := func(member string, n int) {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for n > 0 {
			select {
			case m := <-answered:
				if m == member {
					n--
				}
			case <-timeout:
				t.Fatalf("%s: %d answers missing after 30 s", member, n)
			}
		}
	}
	for i := range members {
		await(t, hosted[i], fmt.Sprintf("m%d hosts a grain", i+1))
	}

	// What an operator reads while it runs (m1 has answered requests).
	answersFrom("m1", 200)
	code, body := get(t, "http://"+members[0].httpAddress()+"/readyz")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "ready members=4\n", body)
	_, body = get(t, "http://"+members[0].httpAddress()+"/metrics")
	require.Contains(t, body, `fraktor_cluster_virtual_actors{kind="counter"}`)
	require.Contains(t, body, `ops_cluster_lease_status{status="held"} 1`)
	require.Contains(t, body, "ops_remote_connections 3")
	require.Contains(t, body, `fraktor_actor_dequeued{fraktor_actor_kind="counter"}`, "the grain side's count (KindTelemetry)")
	code, body = get(t, "http://"+members[0].httpAddress()+"/dashboard/api/state")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `"m1#`)

	// The rolling restart: SIGTERM (a graceful Shutdown), start again,
	// wait until the new incarnation hosts grains again.
	for i, m := range members {
		name := fmt.Sprintf("m%d", i+1)
		answersFrom(name, 200) // the load reaches the member about to leave
		members[i] = nil
		require.NoError(t, m.close(ctx), name)
		members[i], err = startNode(ctx, testOptions(agent, dir, name), log)
		require.NoError(t, err, name)
		back := activationOn(members[i])
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		require.NoError(t, members[i].c.WaitForMembers(wctx, 4), name)
		cancel()
		await(t, back, name+" hosts grains again")
		answersFrom(name, 200) // and its new incarnation
	}
	stopLoad()
	r := <-done
	require.NoError(t, r.err)
	t.Logf("load: %+v", r.sum)
	require.Positive(t, r.sum.Total["ok"])
	require.Len(t, r.sum.Total, 1, "every request answered across the rolling restart: %v %v", r.sum.Total, r.sum.Samples)

	// A member whose certificate another CA issued joins Consul (Consul
	// does not check it) but no member lets it connect: its calls fail
	// with the refused handshake in the error.
	ro := testOptions(agent, rogueDir, "rogue")
	ro.hostKinds, ro.httpAddr = false, ""
	rogue, err := startNode(ctx, ro, log)
	require.NoError(t, err)
	rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	_, err = cluster.Request[*Value](rctx, rogue.c, cluster.NewIdentity(kindCounter, "c-1"), &Add{N: 1})
	cancel()
	require.ErrorIs(t, err, cluster.ErrTimeout)
	require.ErrorIs(t, err, remote.ErrHandshake, "the error says why: %v", err)
	require.NoError(t, rogue.close(ctx))

	// A second member on a taken address: refused at start, with the
	// system error an operator can match.
	dup := testOptions(agent, dir, "m1")
	dup.listen, dup.httpAddr = members[0].c.Self().Address, ""
	_, err = startNode(ctx, dup, log)
	require.ErrorIs(t, err, syscall.EADDRINUSE)
}

// The member command: flags from the environment, a start, and a graceful
// leave when its context ends (SIGTERM in main).
func TestOpsMemberCommandLeavesOnSignal(t *testing.T) {
	agent := testconsul.Start(t)
	dir := t.TempDir()
	require.Equal(t, 0, run(context.Background(), []string{"certs", "--dir", dir, "--names", "m1"}, io.Discard, io.Discard))
	t.Setenv("OPS_CONSUL", agent.Address())
	t.Setenv("OPS_TLS_CA", filepath.Join(dir, "ca.pem"))
	ctx, signal := context.WithCancel(context.Background())
	defer signal()
	pr, pw := io.Pipe()
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"member", "--name", "m1", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0",
			"--tls-cert", filepath.Join(dir, "m1.pem"), "--tls-key", filepath.Join(dir, "m1-key.pem")}, pw, io.Discard)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	require.True(t, lines.Scan())
	require.Regexp(t, `^member m1 listening on 127\.0\.0\.1:\d+, http 127\.0\.0\.1:\d+$`, lines.Text())
	signal()
	var rest []string
	for lines.Scan() {
		rest = append(rest, lines.Text())
	}
	require.Equal(t, 0, <-code)
	require.Len(t, rest, 2)
	require.Equal(t, "member m1: signal, leaving (deadline 20s)", rest[0])
	require.Regexp(t, `^member m1: left in \S+$`, rest[1])

	require.Equal(t, 1, run(context.Background(), []string{"member"}, io.Discard, io.Discard), "--name is required")
	require.Equal(t, 2, run(context.Background(), nil, io.Discard, io.Discard))
}
