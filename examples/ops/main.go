package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

var errUsage = errors.New("usage: ops certs|member|load [flags] (ops <command> --help)")

// run is the program without the process: tests call it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, errUsage)
		return 2
	}
	var err error
	switch args[0] {
	case "certs":
		err = runCerts(args[1:], stdout, stderr)
	case "member":
		err = runMember(ctx, args[1:], stdout, stderr)
	case "load":
		err = runLoadCmd(ctx, args[1:], stdout, stderr)
	default:
		err = errUsage
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "ops "+args[0]+":", err)
		return 1
	}
	return 0
}

func runCerts(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("certs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "directory to write ca.pem, <name>.pem and <name>-key.pem into")
	names := fs.String("names", "m1,m2,m3,load", "comma-separated member names")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("--dir is required")
	}
	ca, err := newCA("ops cluster CA")
	if err != nil {
		return err
	}
	ns := strings.Split(*names, ",")
	if err := writeCerts(*dir, ca, ns, nil); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote a CA and %d member certificates to %s\n", len(ns), *dir)
	return nil
}

// nodeFlags declares the flags every member takes.
func nodeFlags(fs *flag.FlagSet, o *nodeOptions) (logLevel *string) {
	fs.StringVar(&o.name, "name", "", "member ID, stable across restarts (required)")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:0", "remote listen address (host:port)")
	fs.StringVar(&o.advertise, "advertise", "", "address other members dial; empty: the listener's")
	fs.StringVar(&o.cluster, "cluster", "ops", "cluster name (remote's SystemName, the cluster's Name, Consul's Cluster)")
	fs.StringVar(&o.consul, "consul", "127.0.0.1:8500", "Consul agent HTTP address")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "member certificate (PEM); with --tls-key and --tls-ca: mutual TLS")
	fs.StringVar(&o.tlsKey, "tls-key", "", "member private key (PEM)")
	fs.StringVar(&o.tlsCA, "tls-ca", "", "CA certificate members must present (PEM)")
	fs.StringVar(&o.httpAddr, "http", "", "HTTP address of /metrics, /healthz, /readyz and /dashboard/; empty: none")
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 20*time.Second, "deadline of the graceful shutdown on SIGTERM/SIGINT")
	fs.DurationVar(&o.consulTTL, "consul-ttl", 0, "Consul session TTL (T); 0: the provider's default, 15s")
	fs.DurationVar(&o.consulRenew, "consul-renew", 0, "lease renew interval (R); 0: 2s")
	fs.DurationVar(&o.consulRequestTimeout, "consul-request-timeout", 0, "Consul request timeout; 0: 3s")
	fs.DurationVar(&o.consulFence, "consul-fence", 0, "fence period (F); 0: 10s")
	fs.DurationVar(&o.waitOut, "wait-out", 0, "wait-out W before taking over a vanished member's grains; 0: computed")
	fs.IntVar(&o.retryAttempts, "retry-attempts", 0, "request attempts; 0: the cluster's default, 10")
	fs.DurationVar(&o.retryMax, "retry-max", 0, "longest wait between attempts; 0: 2s")
	fs.DurationVar(&o.attemptTimeout, "attempt-timeout", 0, "one attempt's wait for a grain's reply; 0: the request timeout, 5s")
	return fs.String("log-level", "info", "debug, info, warn or error")
}

// parse parses args after filling the flags' defaults from OPS_* variables.
func parse(fs *flag.FlagSet, args []string) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		env := "OPS_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok && err == nil {
			if e := f.Value.Set(v); e != nil {
				err = fmt.Errorf("%s: %w", env, e)
			}
		}
	})
	if err != nil {
		return err
	}
	return fs.Parse(args)
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})), nil
}

func runMember(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("member", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := nodeOptions{hostKinds: true}
	level := nodeFlags(fs, &o)
	fs.DurationVar(&o.sessionIdle, "session-idle", 10*time.Minute, "idle timeout of session grains")
	if err := parse(fs, args); err != nil {
		return err
	}
	if o.name == "" {
		return errors.New("--name is required")
	}
	log, err := newLogger(stderr, *level)
	if err != nil {
		return err
	}
	n, err := startNode(ctx, o, log)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "member %s listening on %s, http %s\n", o.name, n.c.Self().Address, n.httpAddress())
	<-ctx.Done()
	fmt.Fprintf(stdout, "member %s: signal, leaving (deadline %v)\n", o.name, o.shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
	defer cancel()
	start := time.Now()
	err = n.close(sctx)
	fmt.Fprintf(stdout, "member %s: left in %v\n", o.name, time.Since(start).Round(time.Millisecond))
	return err
}

func runLoadCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := nodeOptions{}
	level := nodeFlags(fs, &o)
	var lo loadOptions
	fs.IntVar(&lo.grains, "grains", 300, "counter grains called (plus grains/4 sessions)")
	fs.IntVar(&lo.workers, "workers", 16, "concurrent callers")
	fs.DurationVar(&lo.duration, "duration", 0, "how long to run; 0: until SIGTERM/SIGINT")
	fs.DurationVar(&lo.reqTimeout, "request-timeout", 10*time.Second, "each request's deadline")
	fs.IntVar(&lo.waitMembers, "members", 4, "members in view (this one included) before the load starts")
	fs.DurationVar(&lo.report, "report", time.Second, "progress line period")
	fs.Float64Var(&lo.rate, "rate", 0, "requests per second in all; 0: as fast as the workers go")
	fs.IntVar(&lo.fill, "fill", 0, "activate this many counters once, then stop (capacity)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if o.name == "" {
		o.name = "load"
	}
	log, err := newLogger(stderr, *level)
	if err != nil {
		return err
	}
	n, err := startNode(ctx, o, log)
	if err != nil {
		return err
	}
	_, lerr := runLoad(ctx, n, lo, stdout)
	sctx, cancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
	defer cancel()
	return errors.Join(lerr, n.close(sctx))
}
