package remotebench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"sync"
)

// PeerEnv is the environment variable that turns a re-executed test binary
// into a peer: BENCH_PEER=fraktor|protoactor|raw-tcp|raw-proto.
const PeerEnv = "BENCH_PEER"

// readyPrefix starts the one line a peer prints once it is listening:
// "remotebench-peer ADDRESS SINK-ID ECHO-ID".
const readyPrefix = "remotebench-peer"

// PeerInfo is what a peer announces: its remote address and the IDs of its
// sink and echo actors.
type PeerInfo struct {
	Address, Sink, Echo string
}

// ServePeer hosts the sink and the echo actor of impl on a new actor system
// with its remote listening on 127.0.0.1 (free port), writes one ready line
// to out, and blocks until in reaches end of file (the measuring process
// closed the pipe, or exited); then it stops the system, waiting at most
// until ctx ends (fraktor-go; protoactor-go bounds its own stop), and
// returns.
func ServePeer(ctx context.Context, impl string, in io.Reader, out io.Writer) error {
	announce := func(p PeerInfo) error {
		_, err := fmt.Fprintf(out, "%s %s %s %s\n", readyPrefix, p.Address, p.Sink, p.Echo)
		return err
	}
	stop := func() { _, _ = io.Copy(io.Discard, in) }
	switch impl {
	case ImplFraktor:
		return serveFraktor(ctx, announce, stop)
	case ImplProto:
		return serveProto(ctx, announce, stop)
	case ImplRawTCP, ImplRawProto:
		return serveRaw(announce, stop)
	default:
		return fmt.Errorf("%w: %q", ErrUnknownImpl, impl)
	}
}

// Peer is a running peer process started by StartPeer. Close it exactly
// once.
type Peer struct {
	Info   PeerInfo
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	exited chan error
	stderr *tailBuffer
}

// StartPeer starts cmd (which must run ServePeer with its standard input
// and output, e.g. a test binary re-executed with PeerEnv set), waits until
// it announced its address, and returns it. On failure, or when ctx ends
// first, the process is killed and waited for.
func StartPeer(ctx context.Context, cmd *exec.Cmd) (*Peer, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPeer, err)
	}
	ready := &lineWriter{line: make(chan string, 1)}
	p := &Peer{cmd: cmd, stdin: stdin, exited: make(chan error, 1), stderr: &tailBuffer{}}
	cmd.Stdout = ready
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPeer, err)
	}
	go func() { p.exited <- cmd.Wait() }()
	select {
	case line := <-ready.line:
		f := strings.Fields(line)
		if len(f) == 4 && f[0] == readyPrefix {
			p.Info = PeerInfo{Address: f[1], Sink: f[2], Echo: f[3]}
			return p, nil
		}
		p.kill()
		return nil, fmt.Errorf("%w: unexpected output %q", ErrPeer, line)
	case err := <-p.exited:
		p.exited <- err
		return nil, fmt.Errorf("%w: exited before it was ready (%v): %s", ErrPeer, err, p.stderr.String())
	case <-ctx.Done():
		p.kill()
		return nil, fmt.Errorf("%w: not ready: %w", ErrStalled, ctx.Err())
	}
}

// Close asks the peer to stop (closes its standard input) and waits for it
// to exit; when ctx ends first, the process is killed. It returns the
// process's exit error, with its standard error output.
func (p *Peer) Close(ctx context.Context) error {
	_ = p.stdin.Close()
	select {
	case err := <-p.exited:
		if err != nil {
			return fmt.Errorf("%w: %w: %s", ErrPeer, err, p.stderr.String())
		}
		return nil
	case <-ctx.Done():
		p.kill()
		return fmt.Errorf("%w: did not exit: %w", ErrStalled, ctx.Err())
	}
}

// kill kills the process and waits for it.
func (p *Peer) kill() {
	_ = p.stdin.Close()
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// lineWriter hands the first line written to it to line and discards the
// rest. Only exec's copying goroutine writes to it.
type lineWriter struct {
	buf  []byte
	sent bool
	line chan string
}

func (w *lineWriter) Write(b []byte) (int, error) {
	if w.sent {
		return len(b), nil
	}
	w.buf = append(w.buf, b...)
	if i := strings.IndexByte(string(w.buf), '\n'); i >= 0 {
		w.line <- string(w.buf[:i])
		w.sent, w.buf = true, nil
	}
	return len(b), nil
}

// tailBuffer keeps the last 4 KiB written to it, for error messages.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - 4096; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(b), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// PeerProfileEnv names an environment variable that, when set on a peer,
// makes it write a CPU profile of its whole life to that file:
//
//	BENCH_PEER_CPUPROFILE=/tmp/peer.prof go test -run '^$' -bench RemoteOneWay ./remote/
//
// The client's half is profiled by go test's own -cpuprofile.
const PeerProfileEnv = "BENCH_PEER_CPUPROFILE"

// PeerTraceEnv names an environment variable that, when set on a peer,
// makes it write an execution trace of its whole life to that file (the
// peer's goroutine hand-offs and idle time; `go tool trace -pprof=sched`
// summarizes them):
//
//	BENCH_PEER_TRACE=/tmp/peer.trace go test -run '^$' -bench RemoteOneWay ./remote/
const PeerTraceEnv = "BENCH_PEER_TRACE"

// PeerMemProfileEnv names an environment variable that, when set on a peer,
// makes it write the allocation profile of its whole life to that file when
// it stops (`pprof -sample_index=alloc_space`: which objects a received
// message costs):
//
//	BENCH_PEER_MEMPROFILE=/tmp/peer.mem go test -run '^$' -bench RemoteOneWay ./remote/
const PeerMemProfileEnv = "BENCH_PEER_MEMPROFILE"

// startPeerProfile starts a CPU profile into cpuPath and an execution trace
// into tracePath, and arranges for an allocation profile into memPath at
// the end (nothing for an empty path). It returns the function that stops
// them, writes the allocation profile and closes the files.
func startPeerProfile(cpuPath, tracePath, memPath string) (stop func() error, err error) {
	var stops []func() error
	stopAll := func() error {
		var errs []error
		for _, s := range stops {
			errs = append(errs, s())
		}
		return errors.Join(errs...)
	}
	if cpuPath != "" {
		f, err := os.Create(cpuPath)
		if err != nil {
			return nil, fmt.Errorf("%w: cpu profile: %w", ErrPeer, err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, errors.Join(fmt.Errorf("%w: cpu profile: %w", ErrPeer, err), f.Close())
		}
		stops = append(stops, func() error {
			pprof.StopCPUProfile()
			return f.Close()
		})
	}
	if tracePath != "" {
		f, err := os.Create(tracePath)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("%w: trace: %w", ErrPeer, err), stopAll())
		}
		if err := trace.Start(f); err != nil {
			return nil, errors.Join(fmt.Errorf("%w: trace: %w", ErrPeer, err), f.Close(), stopAll())
		}
		stops = append(stops, func() error {
			trace.Stop()
			return f.Close()
		})
	}
	if memPath != "" {
		stops = append(stops, func() error {
			f, err := os.Create(memPath)
			if err != nil {
				return fmt.Errorf("%w: allocation profile: %w", ErrPeer, err)
			}
			return errors.Join(pprof.Lookup("allocs").WriteTo(f, 0), f.Close())
		})
	}
	return stopAll, nil
}
