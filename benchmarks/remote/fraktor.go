package remotebench

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	fraktor "github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// fraktorSystem starts a fraktor-go system with remote installed: the
// defaults (Workers = GOMAXPROCS, loopback, free port, no logger) with the
// two wrapper types registered and an outbound queue that holds twice the
// one-way window.
func fraktorSystem(name string) (*fraktor.System, error) {
	ser := remote.NewSerializers()
	if err := ser.RegisterProto(&wrapperspb.BytesValue{}, &wrapperspb.Int64Value{}); err != nil {
		return nil, fmt.Errorf("remotebench: register types: %w", err)
	}
	cfg := remote.DefaultConfig()
	cfg.Serializers = ser
	cfg.OutboundQueueSize = 2 * Window
	sys, err := fraktor.NewSystem(fraktor.SystemConfig{Name: name, Extensions: []fraktor.ExtensionInstaller{remote.Install(cfg)}})
	if err != nil {
		return nil, fmt.Errorf("remotebench: fraktor system: %w", err)
	}
	return sys, nil
}

// sinkProps counts payloads: an Int64Value(n) (with the reporter as
// sender) starts a run of n; every AckEvery payloads and at the n-th the
// sink sends its count to the reporter, or badCount once a payload was not
// the one sent (sinkCount).
func fraktorSinkProps() *fraktor.Props {
	var run sinkCount
	var reportTo *fraktor.PID
	return fraktor.PropsFromFunc(func(c fraktor.Context) {
		switch m := c.Message().(type) {
		case *wrapperspb.Int64Value:
			run.start(m.GetValue())
			reportTo = c.Sender()
		case *wrapperspb.BytesValue:
			if report, ok := run.payload(m); ok && reportTo != nil {
				c.Send(reportTo, wrapperspb.Int64(report))
			}
		}
	})
}

// fraktorEchoProps answers every payload with itself.
func fraktorEchoProps() *fraktor.Props {
	return fraktor.PropsFromFunc(func(c fraktor.Context) {
		if m, ok := c.Message().(*wrapperspb.BytesValue); ok {
			c.Respond(m)
		}
	})
}

// serveFraktor hosts the sink and the echo actor until stop returns.
func serveFraktor(ctx context.Context, announce func(PeerInfo) error, stop func()) error {
	sys, err := fraktorSystem("peer")
	if err != nil {
		return err
	}
	root := sys.Root()
	sink, err := root.SpawnNamed(fraktorSinkProps(), sinkName)
	if err == nil {
		var echo *fraktor.PID
		echo, err = root.SpawnNamed(fraktorEchoProps(), echoName)
		if err == nil {
			err = announce(PeerInfo{Address: remote.Get(sys).Address(), Sink: sink.ID, Echo: echo.ID})
		}
	}
	if err == nil {
		stop()
	}
	if serr := sys.Shutdown(ctx); err == nil && serr != nil {
		err = fmt.Errorf("remotebench: fraktor peer shutdown: %w", serr)
	}
	return err
}

// fraktorClient is the measuring side for fraktor-go.
type fraktorClient struct {
	sys        *fraktor.System
	sink, echo *fraktor.PID
}

func newFraktorClient(peer PeerInfo) (*fraktorClient, error) {
	sys, err := fraktorSystem("client")
	if err != nil {
		return nil, err
	}
	return &fraktorClient{
		sys:  sys,
		sink: fraktor.NewPID(peer.Address, peer.Sink),
		echo: fraktor.NewPID(peer.Address, peer.Echo),
	}, nil
}

// OneWay implements Client.
func (c *fraktorClient) OneWay(n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	root := c.sys.Root()
	w := newWindow()
	reporter := root.Spawn(fraktor.PropsFromFunc(func(ctx fraktor.Context) {
		if m, ok := ctx.Message().(*wrapperspb.Int64Value); ok {
			w.ack(m.GetValue())
		}
	}))
	defer root.Stop(reporter)
	root.SendWithSender(c.sink, wrapperspb.Int64(int64(n)), reporter)
	msg := wrapperspb.Bytes(payload())
	return runOneWay(w, n, func() { root.Send(c.sink, msg) })
}

// PingPong implements Client.
func (c *fraktorClient) PingPong(n int, lat []time.Duration) (int, error) {
	if n < 1 || len(lat) < n {
		return 0, ErrBadSize
	}
	root := c.sys.Root()
	msg := wrapperspb.Bytes(payload())
	done := make(chan struct{})
	got, bad := 0, false
	var last time.Time
	pinger := root.Spawn(fraktor.PropsFromFunc(func(ctx fraktor.Context) {
		switch m := ctx.Message().(type) {
		case *wrapperspb.Int64Value: // start
			last = time.Now()
			ctx.Request(c.echo, msg)
		case *wrapperspb.BytesValue:
			if !intact(m) {
				bad = true
				close(done)
				return
			}
			now := time.Now()
			lat[got] = now.Sub(last)
			last = now
			got++
			if got == n {
				close(done)
				return
			}
			ctx.Request(c.echo, msg)
		}
	}))
	defer root.Stop(pinger)
	root.Send(pinger, wrapperspb.Int64(0))
	if err := awaitDone(done); err != nil {
		return 0, err
	}
	if bad {
		return got, ErrBadPayload
	}
	return got, nil
}

// Close implements Client.
func (c *fraktorClient) Close(ctx context.Context) error { return c.sys.Shutdown(ctx) }

// LocalPingPong implements localPinger: a local pinger requests a local
// echo actor n times in sequence.
func (c *fraktorClient) LocalPingPong(n int, lat []time.Duration) (int, error) {
	if n < 1 || len(lat) < n {
		return 0, ErrBadSize
	}
	root := c.sys.Root()
	echo := root.Spawn(fraktorEchoProps())
	defer root.Stop(echo)
	msg := wrapperspb.Bytes(payload())
	done := make(chan struct{})
	got := 0
	var last time.Time
	pinger := root.Spawn(fraktor.PropsFromFunc(func(ctx fraktor.Context) {
		switch ctx.Message().(type) {
		case *wrapperspb.Int64Value: // start
			last = time.Now()
			ctx.Request(echo, msg)
		case *wrapperspb.BytesValue:
			now := time.Now()
			lat[got] = now.Sub(last)
			last = now
			got++
			if got == n {
				close(done)
				return
			}
			ctx.Request(echo, msg)
		}
	}))
	defer root.Stop(pinger)
	root.Send(pinger, wrapperspb.Int64(0))
	if err := awaitDone(done); err != nil {
		return got, err
	}
	return got, nil
}
