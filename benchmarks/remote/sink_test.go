package remotebench

import (
	"context"
	"log/slog"
	"testing"
	"time"

	proto "github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/wrapperspb"

	fraktor "github.com/fraktor-go/fraktor/actor"
)

// A one-way run whose sink receives a payload other than the one sent
// fails with ErrBadPayload instead of counting it as delivered, as the
// raw-proto peer refuses one: every implementation's result is checked
// the same way. Each sink runs in this process, fed directly.
func TestSinkReportsBadPayload(t *testing.T) {
	good := wrapperspb.Bytes(payload())
	short := wrapperspb.Bytes(payload()[:PayloadSize/2])
	// Each run function feeds a fresh sink a run of the given payloads and
	// returns the window its reporter acknowledged into.
	impls := map[string]func(t *testing.T, msgs ...*wrapperspb.BytesValue) *window{
		ImplFraktor: func(t *testing.T, msgs ...*wrapperspb.BytesValue) *window {
			sys, err := fraktor.NewSystem(fraktor.SystemConfig{Name: "sink"})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, sys.Shutdown(context.Background())) })
			root := sys.Root()
			w := newWindow()
			reporter := root.Spawn(fraktor.PropsFromFunc(func(c fraktor.Context) {
				if m, ok := c.Message().(*wrapperspb.Int64Value); ok {
					w.ack(m.GetValue())
				}
			}))
			sink := root.Spawn(fraktorSinkProps())
			root.SendWithSender(sink, wrapperspb.Int64(int64(len(msgs))), reporter)
			for _, m := range msgs {
				root.Send(sink, m)
			}
			return w
		},
		ImplProto: func(t *testing.T, msgs ...*wrapperspb.BytesValue) *window {
			sys := proto.NewActorSystem(proto.WithLoggerFactory(func(*proto.ActorSystem) *slog.Logger {
				return slog.New(slog.DiscardHandler)
			}))
			t.Cleanup(sys.Shutdown)
			root := sys.Root
			w := newWindow()
			reporter := root.Spawn(proto.PropsFromFunc(func(c proto.Context) {
				if m, ok := c.Message().(*wrapperspb.Int64Value); ok {
					w.ack(m.GetValue())
				}
			}))
			sink := root.Spawn(protoSinkProps())
			root.RequestWithCustomSender(sink, wrapperspb.Int64(int64(len(msgs))), reporter)
			for _, m := range msgs {
				root.Send(sink, m)
			}
			return w
		},
	}
	for _, impl := range []string{ImplFraktor, ImplProto} {
		t.Run(impl, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			w := impls[impl](t, good, good, good)
			require.NoError(t, w.waitBelow(ctx, 3, 1))
			assert.Equal(t, int64(3), w.acked)

			w = impls[impl](t, good, short, good)
			require.ErrorIs(t, w.waitBelow(ctx, 3, 1), ErrBadPayload)
		})
	}
}

// The sink's count: acknowledgements every AckEvery payloads and at the
// last, badCount from the first bad payload on.
func TestSinkCount(t *testing.T) {
	good := wrapperspb.Bytes(payload())
	var s sinkCount
	s.start(AckEvery + 2)
	for i := 1; i < AckEvery; i++ {
		_, ok := s.payload(good)
		require.False(t, ok, "payload %d", i)
	}
	report, ok := s.payload(good)
	require.True(t, ok)
	assert.Equal(t, int64(AckEvery), report)
	_, ok = s.payload(wrapperspb.Bytes(nil))
	require.False(t, ok)
	report, ok = s.payload(good)
	require.True(t, ok, "the last payload is acknowledged")
	assert.Equal(t, int64(badCount), report)
	assert.False(t, intact(wrapperspb.Bytes(nil)))
	assert.True(t, intact(good))
}
