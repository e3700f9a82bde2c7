package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// The flags' upper bounds: the demo holds every grain's state, every
// caller's goroutine and every acknowledged request (for the check) in
// memory, so an absurd value is refused instead of exhausting it.
const (
	maxMembers  = 64
	maxGrains   = 1_000_000
	maxCallers  = 10_000
	maxDuration = 24 * time.Hour
)

// options are the command-line flags.
type options struct {
	members   int
	duration  time.Duration
	grains    int
	callers   int
	noKill    bool
	dashboard string
	consul    string
	join      bool
	verbose   bool
}

const usage = `usage: go run ./examples/cluster [flags]      (make run)

Starts a fraktor cluster of account grains, drives load from every member,
kills one member abruptly halfway (its grains are activated again on the
others), shuts down gracefully and checks that every acknowledged deposit
and withdrawal is in the accounts' ledgers and that the balances add up.
Exits 1 when the check fails. Ctrl-C ends the run early, gracefully; a
second Ctrl-C ends it at once.

Flags:
`

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.members, "members", 3, "members in this process (embedded registry or --consul)")
	fs.DurationVar(&o.duration, "duration", 20*time.Second, "how long the load runs")
	fs.IntVar(&o.grains, "grains", 300, "number of accounts (grain identities)")
	fs.IntVar(&o.callers, "callers", 4, "concurrent callers per member")
	fs.BoolVar(&o.noKill, "no-kill", false, "do not kill a member midway")
	fs.StringVar(&o.dashboard, "dashboard", "127.0.0.1:8080", "serve the dashboard on this address (\"\" or \"off\": no dashboard; port 0: any free port)")
	fs.StringVar(&o.consul, "consul", "", "use the Consul agent at this address (host:port) as membership provider instead of the embedded registry")
	fs.BoolVar(&o.join, "join", false, "run one member in this process and meet the others through Consul (needs --consul; start the same command in several terminals)")
	fs.BoolVar(&o.verbose, "v", false, "log the runtime's Info messages")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("demo: unexpected arguments %q", fs.Args())
	}
	switch {
	case o.join && o.consul == "":
		return o, errors.New("demo: --join needs --consul ADDR (Consul is where the processes meet)")
	case (o.members < 1 || o.members > maxMembers) && !o.join:
		return o, fmt.Errorf("demo: --members must be 1..%d", maxMembers)
	case o.grains < 1 || o.grains > maxGrains:
		return o, fmt.Errorf("demo: --grains must be 1..%d", maxGrains)
	case o.callers < 1 || o.callers > maxCallers:
		return o, fmt.Errorf("demo: --callers must be 1..%d", maxCallers)
	case o.duration <= 0 || o.duration > maxDuration:
		return o, fmt.Errorf("demo: --duration must be positive and at most %v", maxDuration)
	}
	if o.join {
		o.members = 1
	}
	if o.dashboard == "off" {
		o.dashboard = ""
	}
	if o.dashboard != "" {
		// Without a port, serveDashboard's fallback would listen on ":0",
		// every interface.
		if _, _, err := net.SplitHostPort(o.dashboard); err != nil {
			return o, fmt.Errorf("demo: --dashboard %q: want host:port, \"off\" or \"\": %w", o.dashboard, err)
		}
	}
	return o, nil
}

func main() {
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// The first signal ends the run gracefully. The signals go back to
	// their default action before the run hears of it, so a second Ctrl-C
	// ends the process at once instead of waiting for the graceful part
	// (TestDemoSecondInterruptEndsAtOnce).
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case <-sigs:
			signal.Stop(sigs)
			cancel()
		case <-ctx.Done():
		}
	}()
	code := run(ctx, o, os.Stdout)
	cancel()
	signal.Stop(sigs)
	os.Exit(code)
}
