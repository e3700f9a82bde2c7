package cluster

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/fraktor-go/fraktor/cluster/internal/clusterpb"
	"github.com/fraktor-go/fraktor/remote"
)

// FuzzClusterWire feeds bytes from the network to the decoder of every
// cluster wire message, as the remote node does with an envelope for the
// placement actor, and what decodes to the placement core. Run it with
//
//	go test -run '^$' -fuzz '^FuzzClusterWire$' -fuzztime 150000x ./cluster/
//
// Without -fuzz, `go test` runs the seeds below.
func FuzzClusterWire(f *testing.F) {
	ser := remote.NewSerializers()
	msgs := []proto.Message{
		(*clusterpb.ActivationRequest)(nil), (*clusterpb.ActivationResponse)(nil),
		(*clusterpb.ViewAck)(nil), (*clusterpb.ActivationTerminated)(nil),
		(*clusterpb.GrainError)(nil),
	}
	require.NoError(f, ser.RegisterProto(msgs...))
	names := make([]string, len(msgs))
	for i, m := range msgs {
		names[i] = string(m.ProtoReflect().Descriptor().FullName())
	}

	// The fuzz core: b after a view change that moves x from a (which left
	// without a released marker) to b.
	t1 := NewTopology(1, []Member{mA, mB, mC})
	t2 := NewTopology(2, []Member{mB, mC})
	tv := coreT0.Add(time.Second)
	x := moving(f, "user", t1, t2, mA, mB)

	seed := func(m proto.Message) {
		b, err := proto.Marshal(m)
		require.NoError(f, err)
		f.Add(b)
	}
	seed(&clusterpb.ActivationRequest{Kind: x.Kind, Id: x.ID, Epoch: t2.Epoch, TopologyHash: t2.Hash, Requester: mC.Key()})
	seed(&clusterpb.ActivationRequest{Kind: "user", Id: "y", Epoch: t1.Epoch, TopologyHash: t1.Hash})
	seed(&clusterpb.ActivationRequest{Kind: "nope", Id: "", Epoch: 1 << 63, TopologyHash: 1})
	seed(&clusterpb.ViewAck{MemberKey: mA.Key(), Epoch: t2.Epoch, TopologyHash: t2.Hash})
	seed(&clusterpb.ViewAck{MemberKey: mA.Key(), Epoch: t1.Epoch, TopologyHash: t1.Hash})
	seed(&clusterpb.ViewAck{MemberKey: mC.Key(), Epoch: t2.Epoch, TopologyHash: t2.Hash, Unreachable: []string{mB.Key(), mA.Key(), "x#1"}})
	seed(&clusterpb.ActivationResponse{Status: clusterpb.ActivationStatus_ACTIVATION_STATUS_BUSY, RetryAfterNanos: -1, Error: "x"})
	seed(&clusterpb.ActivationTerminated{Kind: "user", Id: "x", MemberKey: mA.Key(), PidAddress: "a:4000", PidId: "p", TokenEpoch: 3, TokenSeq: 9})
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff})
	f.Add([]byte{0x1a, 0x80, 0x80, 0x80, 0x80, 0x10})
	seed(&clusterpb.GrainError{Code: "insufficient_funds", Message: "balance 0"})

	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range names {
			v, err := ser.Deserialize(remote.SerializerProto, name, data)
			if err != nil {
				if !errors.Is(err, remote.ErrMalformed) {
					t.Fatalf("%s: untyped decode error %v", name, err)
				}
				continue
			}
			c := newTestCore(mB)
			joinView(t, c, t1, coreT0)
			mustInstall(t, c, t2, tv)
			switch m := v.(type) {
			case *clusterpb.ActivationRequest:
				fuzzActivate(t, c, m, tv)
			case *clusterpb.ViewAck:
				// Its reachability report, counted as the vote counts it:
				// only the view's members are ever judged.
				reports := map[string]reachReport{m.MemberKey: {keys: m.Unreachable, at: tv}}
				never := func(string) bool { return false }
				out, _ := votedUnreachable(t2.Members, mB.Key(), m.Unreachable, reports, tv, never, never)
				for _, o := range out {
					require.Contains(t, t2.Members, o)
				}
				c.ack(m.MemberKey, m.Epoch, tv)
				// The barrier on x lifts only for a's acknowledgement of
				// the new view.
				_, _, r := c.activate(x, t2.Epoch, t2.Hash, tv)
				if m.MemberKey == mA.Key() && m.Epoch >= t2.Epoch {
					require.Nil(t, r, "refused after a's ack: %v", r)
				} else {
					require.NotNil(t, r, "granted x on %+v", m)
					require.ErrorIs(t, r, errBusy)
				}
			case *clusterpb.GrainError:
				// What a typed grain's caller makes of it: the same code
				// and message, as a *GrainError.
				_, err := GrainReply[*clusterpb.ViewAck](m)
				var ge *GrainError
				require.ErrorAs(t, err, &ge)
				require.Equal(t, m.Code, ge.Code)
				require.Equal(t, m.Message, ge.Message)
			case *clusterpb.ActivationResponse, *clusterpb.ActivationTerminated:
				// Decoded without the core: the requester and the event
				// stream read them.
			default:
				t.Fatalf("%s decoded to %T", name, v)
			}
		}
	})
}

// fuzzActivate does what the placement actor does with a request from the
// network: it validates the identity, then asks the core, and checks that a
// grant is only given under the core's view to an identity it owns, and that
// a refusal is one of the sentinels the actor maps to a status.
func fuzzActivate(t *testing.T, c *placementCore, req *clusterpb.ActivationRequest, now time.Time) {
	id := Identity{Kind: req.Kind, ID: req.Id}
	if err := id.Validate(); err != nil {
		require.ErrorIs(t, err, ErrInvalidIdentity)
		return
	}
	a, existing, r := c.activate(id, req.Epoch, req.TopologyHash, now)
	if r != nil {
		require.Nil(t, a)
		if !errors.Is(r, ErrOwnershipChanged) && !errors.Is(r, ErrNoSuchKind) && !errors.Is(r, errBusy) {
			t.Fatalf("refusal %v is not a typed refusal", r)
		}
		require.GreaterOrEqual(t, r.retryAfter, time.Duration(0))
		return
	}
	require.False(t, existing)
	require.Equal(t, c.view.Hash, req.TopologyHash, "granted under another view")
	owner, err := c.ring.Owner(id)
	require.NoError(t, err)
	require.Equal(t, c.selfKey, owner.Key(), "granted an identity another member owns")
	require.Equal(t, id, a.id)
	require.Same(t, a, c.acts.get(id), "the lease is held in the table")
	// Granted once: the same request now finds the activation.
	again, existing, r := c.activate(id, req.Epoch, req.TopologyHash, now)
	require.Nil(t, r)
	require.True(t, existing)
	require.Same(t, a, again)
}
