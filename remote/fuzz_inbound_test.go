package remote

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// FuzzDeliverInbound feeds arbitrary envelopes frame bodies to a system
// with the Remote extension, as a connection's reader delivers them
// (Node.deliverBatch: decoding, then Remote.deliverInbound with its runs,
// deliver, targetNotFound, deliverControl, spawn requests and answers):
// a malformed body is ErrMalformed, anything else is delivered or refused
// (dead letters), never a panic.
//
//	go test ./remote -run '^$' -fuzz '^FuzzDeliverInbound$' -fuzztime 60s
func FuzzDeliverInbound(f *testing.F) {
	ser := NewSerializers()
	require.NoError(f, RegisterJSON[*inboundMsg](ser, "test.inboundMsg"))
	cfg := testConfig()
	cfg.Serializers = ser
	cfg.ListenAddress = "rx:1"
	// A small bound on the peer's watches, so that the seeds reach the
	// refusal too.
	cfg.MaxWatchesPerPeer = 2
	// A kind to spawn, and a small bound on the peer's spawns: the
	// seeds reach the refusal, and the actors spawned across the
	// executions stay at two.
	cfg.Kinds = map[string]*actor.Props{"k": actor.PropsFromFunc(func(actor.Context) {})}
	cfg.MaxSpawnsPerPeer = 2
	// Answers go to made-up addresses: the memory network refuses the
	// dial at once and the endpoint gives up soon after.
	cfg.ReconnectBackoffMin, cfg.ReconnectBackoffMax, cfg.GiveUpAfter = time.Millisecond, time.Millisecond, time.Millisecond
	sys, err := actor.NewSystem(actor.SystemConfig{Name: "rx", Extensions: []actor.ExtensionInstaller{Install(cfg, WithTransport(NewMemoryNetwork()))}})
	require.NoError(f, err)
	f.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		require.NoError(f, sys.Shutdown(ctx))
	})
	r := Get(sys)
	r.node.hooks.Deliver = nil // the reader's path: Remote.deliverInbound
	const peer = "10.9.9.9:1"
	from := Peer{Address: peer, NodeID: "peer"}
	props := actor.PropsFromFunc(func(actor.Context) {})
	respawn := func() {
		for _, name := range []string{"a", "b"} {
			_, _ = sys.Root().SpawnNamed(props, name) // ErrNameExists while it lives
		}
	}
	respawn()

	local := r.Address()
	user, err := ser.codecFor(&inboundMsg{})
	require.NoError(f, err)
	payload, err := user.encode(nil, &inboundMsg{N: 1})
	require.NoError(f, err)
	sysEnv := func(target string, sender PIDRef, m SystemMessage) wireEnvelope {
		p, err := AppendSystemMessage(nil, m)
		require.NoError(f, err)
		return wireEnvelope{target: PIDRef{local, target}, sender: sender, serializer: SerializerSystem, payload: p}
	}
	remoteSender := PIDRef{peer, "s"}
	seeds := [][]wireEnvelope{
		{ // a run to one actor, a missing one, another, a header, a bad payload
			{target: PIDRef{local, "a"}, sender: remoteSender, serializer: user.ser, typeName: user.name, payload: payload},
			{target: PIDRef{local, "a"}, sender: remoteSender, serializer: user.ser, typeName: user.name, payload: payload},
			{target: PIDRef{local, "zz"}, sender: remoteSender, serializer: user.ser, typeName: user.name, payload: payload},
			{target: PIDRef{local, "b"}, serializer: user.ser, typeName: user.name, payload: payload, header: actor.Header{"k": "v"}},
			{target: PIDRef{local, "a"}, sender: remoteSender, serializer: user.ser, typeName: user.name, payload: []byte("{")},
			{target: PIDRef{"elsewhere:9", "a"}, sender: remoteSender, serializer: user.ser, typeName: user.name, payload: payload},
			{target: PIDRef{actor.LocalAddress, "a"}, sender: PIDRef{actor.LocalAddress, "a"}, serializer: user.ser, typeName: user.name, payload: payload},
		},
		{ // the remote system messages
			sysEnv("a", PIDRef{}, &WatchRequest{Watcher: remoteSender, Watchee: PIDRef{local, "a"}}),
			sysEnv("a", PIDRef{}, &UnwatchRequest{Watcher: remoteSender, Watchee: PIDRef{local, "a"}}),
			sysEnv("zz", PIDRef{}, &WatchRequest{Watcher: remoteSender, Watchee: PIDRef{local, "zz"}}),
			sysEnv("a", PIDRef{}, &TerminatedNotice{Who: PIDRef{peer, "x"}, Why: TerminatedStopped}),
			sysEnv("a", remoteSender, &DeadLetterResponse{Target: PIDRef{peer, "x"}}),
			sysEnv("a", remoteSender, &PoisonPillRequest{}),
			sysEnv("b", PIDRef{}, &StopRequest{}),
			sysEnv("zz", remoteSender, &PoisonPillRequest{}),
			sysEnv("", remoteSender, &SpawnRequest{Name: "c", Kind: "k", RequestID: 7}),
			sysEnv("", remoteSender, &SpawnResponse{RequestID: 7, PID: PIDRef{peer, "c"}}),
			sysEnv("a", remoteSender, &Ping{Seq: 1}),
		},
		{ // watchers elsewhere (a third node, this node: refused), a dead-letter reason, senders on third nodes
			sysEnv("a", PIDRef{}, &WatchRequest{Watcher: PIDRef{"third:1", "w"}, Watchee: PIDRef{local, "a"}}),
			sysEnv("a", PIDRef{}, &WatchRequest{Watcher: PIDRef{local, "b"}, Watchee: PIDRef{local, "a"}}),
			sysEnv("a", remoteSender, &DeadLetterResponse{Target: PIDRef{peer, "x"}, Reason: DeadLetterMailboxFull}),
			sysEnv("", PIDRef{}, &WatchesDropped{NodeID: "another"}),
			sysEnv("", PIDRef{}, &WatchesDropped{NodeID: r.NodeID()}),
			{target: PIDRef{local, "zz"}, sender: PIDRef{"third:1", "s"}, serializer: user.ser, typeName: user.name, payload: payload},
			{target: PIDRef{local, "a"}, sender: PIDRef{"third:2", "s"}, serializer: user.ser, typeName: user.name, payload: payload},
		},
		{ // watches beyond Config.MaxWatchesPerPeer (refused), one repeated, one ended; a refusal of a watch of this node's
			sysEnv("a", PIDRef{}, &WatchRequest{Watcher: PIDRef{peer, "w1"}, Watchee: PIDRef{local, "a"}}),
			sysEnv("b", PIDRef{}, &WatchRequest{Watcher: PIDRef{peer, "w2"}, Watchee: PIDRef{local, "b"}}),
			sysEnv("a", PIDRef{}, &WatchRequest{Watcher: PIDRef{peer, "w3"}, Watchee: PIDRef{local, "a"}}),
			sysEnv("a", PIDRef{}, &WatchRequest{Watcher: PIDRef{peer, "w1"}, Watchee: PIDRef{local, "a"}}),
			sysEnv("b", PIDRef{}, &UnwatchRequest{Watcher: PIDRef{peer, "w2"}, Watchee: PIDRef{local, "b"}}),
			sysEnv("a", PIDRef{}, &WatchRequest{Watcher: PIDRef{peer, "w4"}, Watchee: PIDRef{local, "a"}}),
			sysEnv("a", PIDRef{}, &TerminatedNotice{Who: PIDRef{peer, "x"}, Why: TerminatedWatchRefused}),
		},
		{ // spawns beyond Config.MaxSpawnsPerPeer (refused), an answer with the too-many code; answers to no pending future
			sysEnv("", remoteSender, &SpawnRequest{Kind: "k", RequestID: 1}),
			sysEnv("", remoteSender, &SpawnRequest{Kind: "k", RequestID: 2}),
			sysEnv("", remoteSender, &SpawnRequest{Kind: "k", RequestID: 3}),
			sysEnv("", remoteSender, &SpawnResponse{RequestID: 3, Err: spawnErrTooMany + ": at the bound"}),
			{target: PIDRef{local, "future$1000000000"}, sender: remoteSender, serializer: user.ser, typeName: user.name, payload: payload},
			sysEnv("future$1000000000", PIDRef{}, &TerminatedNotice{Who: PIDRef{peer, "x"}}),
			sysEnv("future$1000000000", remoteSender, &DeadLetterResponse{Target: PIDRef{peer, "x"}}),
		},
	}
	for _, envs := range seeds {
		enc := newEnvelopeEncoder(peer, local)
		var body []byte
		for i := range envs {
			body = enc.append(body, &envs[i])
		}
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		respawn()
		err := r.node.deliverBatch(from, newEnvelopeDecoder(local, peer), body)
		if err != nil {
			require.ErrorIs(t, err, ErrMalformed)
		}
	})
}
