package clusterbench

import (
	"context"
	"strconv"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/fraktor-go/fraktor/benchmarks/cluster/echopb"
	"github.com/fraktor-go/fraktor/cluster"
)

// typedEcho is the generated Echo grain: the same work as the untyped echo
// kind.
type typedEcho struct{}

func (typedEcho) Echo(_ cluster.GrainContext, req *wrapperspb.BytesValue) (*wrapperspb.BytesValue, error) {
	return req, nil
}

// ownedBy returns an ID of kind whose owner is member owner.
func (fc *fraktorCluster) ownedBy(kind string, owner int) (string, error) {
	t, ok := fc.c[0].Topology()
	if !ok {
		return "", ErrNotReady
	}
	ring := fc.ring.Build(t)
	for i := range 10000 {
		id := "typed-" + strconv.Itoa(i)
		m, err := ring.Owner(cluster.NewIdentity(kind, id))
		if err != nil {
			return "", err
		}
		if fc.index[m.Address] == owner {
			return id, nil
		}
	}
	return "", ErrNoIdentity
}

// BenchmarkTypedGrainWarm: sequential requests from member 0 to a warm
// grain on member 1 through the generated client (call=typed) and with the
// untyped cluster.Request (call=untyped), same payload, same cluster,
// alternating. ns/op is the mean round trip.
//
//	go test -run '^$' -bench TypedGrainWarm -benchtime 20000x -count 6 ./cluster/
func BenchmarkTypedGrainWarm(b *testing.B) {
	c, err := Start(ImplFraktor, Options{FraktorKinds: []cluster.Kind{
		echopb.EchoKind(func(cluster.Identity) echopb.EchoGrain { return typedEcho{} }),
	}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), readyLimit)
		defer cancel()
		if err := c.Close(ctx); err != nil {
			b.Error(err)
		}
	})
	fc := c.(*fraktorCluster)
	typedID, err := fc.ownedBy(echopb.EchoKindName, 1)
	if err != nil {
		b.Fatal(err)
	}
	untypedID, err := fc.ownedBy(Kind, 1)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	msg := payload()
	client := echopb.NewEchoClient(fc.c[0], typedID)
	untyped := cluster.NewIdentity(Kind, untypedID)
	calls := []struct {
		name string
		call func(context.Context) error
	}{
		{"untyped", func(ctx context.Context) error {
			r, err := cluster.Request[*wrapperspb.BytesValue](ctx, fc.c[0], untyped, msg)
			if err != nil {
				return err
			}
			return checkReply(r, msg)
		}},
		{"typed", func(ctx context.Context) error {
			r, err := client.Echo(ctx, msg)
			if err != nil {
				return err
			}
			return checkReply(r, msg)
		}},
	}
	for _, cl := range calls {
		b.Run("call="+cl.name, func(b *testing.B) {
			if err := RoundTrips(ctx, make([]time.Duration, 16), cl.call); err != nil { // warm
				b.Fatal(err)
			}
			lat := make([]time.Duration, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			err := RoundTrips(ctx, lat, cl.call)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			reportLatency(b, lat)
		})
	}
}
