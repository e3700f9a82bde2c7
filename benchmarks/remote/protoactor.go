package remotebench

import (
	"context"
	"log/slog"
	"time"

	proto "github.com/asynkron/protoactor-go/actor"
	protoremote "github.com/asynkron/protoactor-go/remote"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// protoSystem starts a protoactor-go system with its remote on loopback
// and a free port: the defaults (dispatcher throughput 300, unbounded
// mailboxes, endpoint writer batches of 1000, insecure gRPC) except the
// logger, which discards (fraktor-go logs nothing without a logger).
// Messages are protobuf; protoactor-go decodes them through the global
// protobuf registry, where the wrapper types are registered by their
// package's init.
func protoSystem() (*proto.ActorSystem, *protoremote.Remote) {
	sys := proto.NewActorSystem(proto.WithLoggerFactory(func(*proto.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}))
	r := protoremote.NewRemote(sys, protoremote.Configure("127.0.0.1", 0))
	r.Start()
	return sys, r
}

// stopProto stops the remote and the system. protoactor-go takes no
// context: its graceful stop is bounded by its own 10 s limit. The peer
// stops its remote non-gracefully: the graceful stop races (go test -race
// reports it) with the endpoint writer that publishes the loss of the
// client's connection, in protoactor-go's endpointManager.stop versus
// removeEndpoint, which a peer whose client has just gone always meets.
func stopProto(sys *proto.ActorSystem, r *protoremote.Remote, graceful bool) {
	r.Shutdown(graceful)
	sys.Shutdown()
}

// protoSinkProps is fraktorSinkProps for protoactor-go.
func protoSinkProps() *proto.Props {
	var run sinkCount
	var reportTo *proto.PID
	return proto.PropsFromFunc(func(c proto.Context) {
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

// protoEchoProps answers every payload with itself.
func protoEchoProps() *proto.Props {
	return proto.PropsFromFunc(func(c proto.Context) {
		if m, ok := c.Message().(*wrapperspb.BytesValue); ok {
			c.Respond(m)
		}
	})
}

// serveProto hosts the sink and the echo actor until stop returns.
func serveProto(_ context.Context, announce func(PeerInfo) error, stop func()) error {
	sys, r := protoSystem()
	defer stopProto(sys, r, false)
	root := sys.Root
	sink, err := root.SpawnNamed(protoSinkProps(), sinkName)
	if err != nil {
		return err
	}
	echo, err := root.SpawnNamed(protoEchoProps(), echoName)
	if err != nil {
		return err
	}
	if err := announce(PeerInfo{Address: sys.Address(), Sink: sink.Id, Echo: echo.Id}); err != nil {
		return err
	}
	stop()
	return nil
}

// protoClient is the measuring side for protoactor-go.
type protoClient struct {
	sys        *proto.ActorSystem
	r          *protoremote.Remote
	sink, echo *proto.PID
}

func newProtoClient(peer PeerInfo) (*protoClient, error) {
	sys, r := protoSystem()
	return &protoClient{
		sys:  sys,
		r:    r,
		sink: proto.NewPID(peer.Address, peer.Sink),
		echo: proto.NewPID(peer.Address, peer.Echo),
	}, nil
}

// OneWay implements Client.
func (c *protoClient) OneWay(n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	root := c.sys.Root
	w := newWindow()
	reporter := root.Spawn(proto.PropsFromFunc(func(ctx proto.Context) {
		if m, ok := ctx.Message().(*wrapperspb.Int64Value); ok {
			w.ack(m.GetValue())
		}
	}))
	defer root.Stop(reporter)
	root.RequestWithCustomSender(c.sink, wrapperspb.Int64(int64(n)), reporter)
	msg := wrapperspb.Bytes(payload())
	return runOneWay(w, n, func() { root.Send(c.sink, msg) })
}

// PingPong implements Client.
func (c *protoClient) PingPong(n int, lat []time.Duration) (int, error) {
	if n < 1 || len(lat) < n {
		return 0, ErrBadSize
	}
	root := c.sys.Root
	msg := wrapperspb.Bytes(payload())
	done := make(chan struct{})
	got, bad := 0, false
	var last time.Time
	pinger := root.Spawn(proto.PropsFromFunc(func(ctx proto.Context) {
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

// Close implements Client; protoactor-go's stop takes no context.
func (c *protoClient) Close(context.Context) error {
	stopProto(c.sys, c.r, true)
	return nil
}

// LocalPingPong implements localPinger: a local pinger requests a local
// echo actor n times in sequence.
func (c *protoClient) LocalPingPong(n int, lat []time.Duration) (int, error) {
	if n < 1 || len(lat) < n {
		return 0, ErrBadSize
	}
	root := c.sys.Root
	echo := root.Spawn(protoEchoProps())
	defer root.Stop(echo)
	msg := wrapperspb.Bytes(payload())
	done := make(chan struct{})
	got := 0
	var last time.Time
	pinger := root.Spawn(proto.PropsFromFunc(func(ctx proto.Context) {
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
