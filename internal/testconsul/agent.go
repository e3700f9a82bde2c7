package testconsul

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
)

// EnvBinary names the environment variable that overrides the binary path.
const EnvBinary = "FRAKTOR_CONSUL"

// StartTimeout bounds how long Start and Restart wait for a ready agent.
const StartTimeout = 60 * time.Second

// stopTimeout bounds a graceful stop before the process is killed.
const stopTimeout = 20 * time.Second

// Lines of the agent's log that mark it ready: it leads the one-server
// cluster and has synced its node into the catalog (sessions need that).
var readyMarkers = []string{"cluster leadership acquired", "Synced node info"}

// Agent is one running (or stopped) Consul agent owned by a test.
// Methods are called from the test goroutine.
type Agent struct {
	t       testing.TB
	bin     string
	dir     string
	cfgPath string
	http    int

	cmd    *exec.Cmd
	exited chan struct{}
	out    *logWriter
	paused bool
}

// Options change the test agent's configuration; the zero value is the
// default agent.
type Options struct {
	// HTTPMaxConnsPerClient sets limits.http_max_conns_per_client, the
	// agent's limit of concurrent HTTP connections from one client
	// address (0: Consul's default, 200). Connections over it are answered
	// 429 Too Many Requests.
	HTTPMaxConnsPerClient int
}

// Start starts an agent and waits until it is ready; it is stopped at test
// cleanup. The test fails (never skips) if the agent cannot start.
func Start(t testing.TB) *Agent {
	t.Helper()
	return StartWith(t, Options{})
}

// StartWith is Start with options.
func StartWith(t testing.TB, o Options) *Agent {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatalf("testconsul: %v", err)
	}
	dir := t.TempDir()
	a := &Agent{t: t, bin: bin, dir: dir, cfgPath: filepath.Join(dir, "agent.hcl")}
	t.Cleanup(func() {
		a.stop()
		if t.Failed() && a.out != nil {
			t.Logf("testconsul: agent log tail:\n%s", a.out.tail(60))
		}
	})
	// The ports are free when chosen, but another process (a test running
	// in parallel) may take one before the agent binds it: the agent then
	// exits at once, and the agent is started again on new ports.
	for try := 1; ; try++ {
		ports, err := freePorts(3)
		if err != nil {
			t.Fatalf("testconsul: no free loopback ports: %v", err)
		}
		a.http, a.out = ports[0], nil
		if err := os.RemoveAll(filepath.Join(dir, "data")); err != nil {
			t.Fatalf("testconsul: clear data directory: %v", err)
		}
		if portsChosen != nil {
			portsChosen(ports)
		}
		if err := os.WriteFile(a.cfgPath, []byte(agentConfig(filepath.Join(dir, "data"), ports, o)), 0o600); err != nil {
			t.Fatalf("testconsul: write config: %v", err)
		}
		if !a.startOnce(try < maxPortTries) {
			return a
		}
		t.Logf("testconsul: a port was taken before the agent bound it (try %d), starting again on new ports", try)
	}
}

// maxPortTries bounds the starts of a new agent that find a port taken.
const maxPortTries = 5

// portsChosen, when set (by this package's tests), is called with the
// ports of each start of a new agent before the agent runs.
var portsChosen func(ports []int)

// Binary returns the agent binary's path: $FRAKTOR_CONSUL, or bin/consul in
// the repository root (the directory of the go.mod of module
// github.com/fraktor-go/fraktor above the working directory).
func Binary() (string, error) {
	if p := os.Getenv(EnvBinary); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvBinary, p, err)
		}
		return p, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	p := filepath.Join(root, "bin", "consul")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("no Consul binary at %s: run `make consul` (bash tools/consul/install.sh) or set %s", p, EnvBinary)
	}
	return p, nil
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module github.com/fraktor-go/fraktor\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repository root (go.mod of github.com/fraktor-go/fraktor) not found above the working directory")
		}
		dir = parent
	}
}

// Address returns the agent's HTTP address, "127.0.0.1:port".
func (a *Agent) Address() string { return fmt.Sprintf("127.0.0.1:%d", a.http) }

// APIConfig returns a client config for the agent (no token, plain HTTP).
func (a *Agent) APIConfig() api.Config {
	return api.Config{Address: a.Address(), Scheme: "http"}
}

// Stop stops the agent (SIGTERM, then SIGKILL after a grace period) and
// waits for it to exit. Its data directory is kept for Restart.
func (a *Agent) Stop() {
	a.t.Helper()
	a.stop()
}

// Kill kills the agent (SIGKILL), as a crash would, and waits for it to
// exit. Its data directory is kept for Restart.
func (a *Agent) Kill() {
	a.t.Helper()
	if a.cmd == nil {
		return
	}
	_ = a.cmd.Process.Kill()
	<-a.exited
	a.cmd, a.paused = nil, false
}

// Pause freezes the running agent (SIGSTOP) and returns once all its
// threads stopped: it keeps its sockets, so connections are accepted by
// the kernel and requests queue, but nothing is answered and its timers
// stand still until Resume. Linux only (/proc).
func (a *Agent) Pause() {
	a.t.Helper()
	if a.cmd == nil {
		a.t.Fatalf("testconsul: Pause: agent not running")
	}
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		a.t.Fatalf("testconsul: Pause: %v", err)
	}
	a.paused = true
	// The signal is delivered asynchronously: a thread may still answer a
	// request until it stops. The kernel offers no event for "all threads
	// stopped", so poll their states (bounded).
	deadline := time.Now().Add(stopTimeout)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !allThreadsStopped(a.cmd.Process.Pid) {
		if time.Now().After(deadline) {
			a.t.Fatalf("testconsul: Pause: agent threads not stopped after %v", stopTimeout)
		}
		<-tick.C
	}
}

// allThreadsStopped reports whether every thread of pid is in the stopped
// state ('T' in /proc/<pid>/task/<tid>/stat).
func allThreadsStopped(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, task.Name()))
		if err != nil {
			return false
		}
		// The state follows the command name, which is in parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) || b[i+2] != 'T' {
			return false
		}
	}
	return true
}

// Resume continues a paused agent (SIGCONT); it answers the requests that
// queued meanwhile and runs its overdue timers.
func (a *Agent) Resume() {
	a.t.Helper()
	if a.cmd == nil {
		a.t.Fatalf("testconsul: Resume: agent not running")
	}
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		a.t.Fatalf("testconsul: Resume: %v", err)
	}
	a.paused = false
}

// Restart starts a stopped (or killed) agent again on the same ports and
// data directory, and waits until it is ready; a running one is stopped
// first.
func (a *Agent) Restart() {
	a.t.Helper()
	a.stop()
	a.start()
}

// Logs returns the agent's output so far (the last lines).
func (a *Agent) Logs() string { return a.out.tail(200) }

func (a *Agent) start() {
	a.t.Helper()
	a.startOnce(false)
}

// startOnce starts the agent and waits until it is ready. With
// retryBind, an agent that exits because a port is taken is not a
// failure: startOnce reports true and the caller tries other ports.
func (a *Agent) startOnce(retryBind bool) (portTaken bool) {
	a.t.Helper()
	if a.out == nil {
		a.out = newLogWriter()
	}
	ready := a.out.arm()
	cmd := exec.Command(a.bin, "agent", "-config-file", a.cfgPath)
	cmd.Stdout = a.out
	cmd.Stderr = a.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		a.t.Fatalf("testconsul: start %s: %v", a.bin, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	a.cmd, a.exited = cmd, exited
	timer := time.NewTimer(StartTimeout)
	defer timer.Stop()
	select {
	case <-ready:
	case <-exited:
		a.cmd = nil
		if retryBind && strings.Contains(a.out.tail(40), "address already in use") {
			return true
		}
		a.t.Fatalf("testconsul: agent exited before it was ready (%v):\n%s", waitErr, a.out.tail(40))
	case <-timer.C:
		a.stop()
		a.t.Fatalf("testconsul: agent not ready after %v:\n%s", StartTimeout, a.out.tail(40))
	}
	if err := a.commitWrite(StartTimeout); err != nil {
		a.stop()
		a.t.Fatalf("testconsul: agent leads but did not commit a write: %v\n%s", err, a.out.tail(40))
	}
	return false
}

// commitWrite writes a key and waits (up to limit) until the write is
// committed: a freshly elected leader may take a while for its first Raft
// commits, and tests with short request timeouts should not pay for that.
func (a *Agent) commitWrite(limit time.Duration) error {
	cfg := a.APIConfig()
	client, err := api.NewClient(&cfg)
	if err != nil {
		return err
	}
	defer cfg.HttpClient.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	_, err = client.KV().Put(&api.KVPair{Key: "testconsul/ready", Value: []byte("1")}, (&api.WriteOptions{}).WithContext(ctx))
	return err
}

func (a *Agent) stop() {
	if a.cmd == nil {
		return
	}
	if a.paused {
		_ = a.cmd.Process.Signal(syscall.SIGCONT)
		a.paused = false
	}
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	timer := time.NewTimer(stopTimeout)
	defer timer.Stop()
	select {
	case <-a.exited:
	case <-timer.C:
		_ = a.cmd.Process.Kill()
		<-a.exited
	}
	a.cmd = nil
}

func agentConfig(dataDir string, ports []int, o Options) string {
	limits := ""
	if o.HTTPMaxConnsPerClient > 0 {
		limits = fmt.Sprintf("limits { http_max_conns_per_client = %d }\n", o.HTTPMaxConnsPerClient)
	}
	return limits + fmt.Sprintf(`node_name = "fraktor-test"
datacenter = "dc1"
server = true
bootstrap = true
bind_addr = "127.0.0.1"
client_addr = "127.0.0.1"
advertise_addr = "127.0.0.1"
data_dir = %q
log_level = "INFO"
session_ttl_min = "1s"
disable_update_check = true
disable_anonymous_signature = true
disable_keyring_file = true
leave_on_terminate = false
performance { raft_multiplier = 1 }
connect { enabled = false }
ui_config { enabled = false }
ports {
  http = %d
  serf_lan = %d
  server = %d
  dns = -1
  grpc = -1
  grpc_tls = -1
  https = -1
  serf_wan = -1
}
`, dataDir, ports[0], ports[1], ports[2])
}

// freePorts returns n distinct loopback ports that are free for TCP and UDP
// right now (Serf uses both on its port).
func freePorts(n int) ([]int, error) {
	var ports []int
	var closers []func()
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	for attempts := 0; len(ports) < n && attempts < 50; attempts++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		closers = append(closers, func() { _ = l.Close() })
		port := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		closers = append(closers, func() { _ = u.Close() })
		ports = append(ports, port)
	}
	if len(ports) < n {
		return nil, errors.New("could not find free TCP+UDP ports")
	}
	return ports, nil
}

// logWriter collects the agent's output and closes the ready channel once
// every ready marker was seen since the last arm.
type logWriter struct {
	mu      sync.Mutex
	partial []byte
	lines   []string
	seen    map[string]bool
	ready   chan struct{}
}

func newLogWriter() *logWriter { return &logWriter{} }

// arm starts waiting for the ready markers of a new agent process.
func (w *logWriter) arm() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = make(map[string]bool)
	w.ready = make(chan struct{})
	return w.ready
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		line := string(w.partial[:i])
		w.partial = w.partial[i+1:]
		w.lines = append(w.lines, line)
		if len(w.lines) > 2000 {
			w.lines = w.lines[len(w.lines)-1000:]
		}
		w.check(line)
	}
	return len(p), nil
}

func (w *logWriter) check(line string) {
	if w.ready == nil || w.seen == nil {
		return
	}
	for _, m := range readyMarkers {
		if strings.Contains(line, m) {
			w.seen[m] = true
		}
	}
	if len(w.seen) == len(readyMarkers) {
		close(w.ready)
		w.seen = nil
	}
}

func (w *logWriter) tail(n int) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	from := max(0, len(w.lines)-n)
	return strings.Join(w.lines[from:], "\n")
}
