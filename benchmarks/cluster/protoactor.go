package clusterbench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	proto "github.com/asynkron/protoactor-go/actor"
	pcluster "github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/clusterproviders/test"
	"github.com/asynkron/protoactor-go/cluster/identitylookup/disthash"
	premote "github.com/asynkron/protoactor-go/remote"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// protoCluster is n protoactor-go systems with remote and the cluster
// started, sharing one test-provider agent, with the disthash lookup.
type protoCluster struct {
	c     []*pcluster.Cluster
	echo  []*proto.PID
	index map[string]int // member address -> index
}

// protoEcho answers every payload with itself.
type protoEcho struct{}

func (protoEcho) Receive(c proto.Context) {
	if m, ok := c.Message().(*wrapperspb.BytesValue); ok {
		c.Respond(m)
	}
}

func startProto(opts Options) (_ *protoCluster, err error) {
	pc := &protoCluster{index: make(map[string]int)}
	defer func() {
		if err != nil {
			err = errors.Join(err, pc.Close(context.Background()))
		}
	}()
	agent := test.NewInMemAgent()
	props := proto.PropsFromProducer(func() proto.Actor { return protoEcho{} })
	// One signal per member once its member list holds every member; the
	// subscriptions precede StartMember so no topology event is missed.
	full := make([]chan struct{}, opts.Members)
	for i := range opts.Members {
		sys := proto.NewActorSystem(proto.WithLoggerFactory(func(*proto.ActorSystem) *slog.Logger {
			return slog.New(slog.DiscardHandler)
		}))
		cfg := pcluster.Configure("bench", test.NewTestProvider(agent), disthash.New(),
			premote.Configure("127.0.0.1", 0),
			pcluster.WithKinds(pcluster.NewKind(Kind, props)),
			pcluster.WithRequestTimeout(callLimit),
		)
		full[i] = make(chan struct{}, 1)
		sys.EventStream.Subscribe(func(ev any) {
			if t, ok := ev.(*pcluster.ClusterTopology); ok && len(t.Members) == opts.Members {
				select {
				case full[i] <- struct{}{}:
				default:
				}
			}
		})
		pc.c = append(pc.c, pcluster.New(sys, cfg))
	}
	for _, c := range pc.c {
		c.StartMember()
		pc.index[c.ActorSystem.Address()] = len(pc.echo)
		echo, err := c.ActorSystem.Root.SpawnNamed(props, echoName)
		if err != nil {
			return nil, fmt.Errorf("clusterbench: protoactor echo actor: %w", err)
		}
		pc.echo = append(pc.echo, echo)
	}
	timer := time.NewTimer(readyLimit)
	defer timer.Stop()
	for i, c := range pc.c {
		if c.MemberList.Members().Len() == opts.Members {
			continue
		}
		select {
		case <-full[i]:
		case <-timer.C:
			return nil, fmt.Errorf("%w: protoactor member %d sees %d of %d members", ErrNotReady, i, c.MemberList.Members().Len(), opts.Members)
		}
	}
	return pc, nil
}

func (pc *protoCluster) Members() int { return len(pc.c) }

func (pc *protoCluster) Request(_ context.Context, from int, id string, msg *wrapperspb.BytesValue) error {
	reply, err := pc.c[from].Request(id, Kind, msg)
	if err != nil {
		return err
	}
	return checkReply(reply, msg)
}

func (pc *protoCluster) RemoteRequest(_ context.Context, from, to int, msg *wrapperspb.BytesValue) error {
	reply, err := pc.c[from].ActorSystem.Root.RequestFuture(pc.echo[to], msg, callLimit).Result()
	if err != nil {
		return err
	}
	return checkReply(reply, msg)
}

func (pc *protoCluster) Owner(from int, id string) (int, error) {
	rdv := pcluster.NewRendezvous()
	rdv.UpdateMembers(pc.c[from].MemberList.Members().Members())
	addr := rdv.GetByClusterIdentity(pcluster.NewClusterIdentity(id, Kind))
	i, ok := pc.index[addr]
	if !ok {
		return -1, fmt.Errorf("%w: owner %q is not a member", ErrNotReady, addr)
	}
	return i, nil
}

// Close shuts every member down gracefully. protoactor-go's Shutdown takes
// no deadline; ctx is not consulted.
func (pc *protoCluster) Close(context.Context) error {
	for _, c := range pc.c {
		c.Shutdown(true)
	}
	pc.c = nil
	return nil
}
