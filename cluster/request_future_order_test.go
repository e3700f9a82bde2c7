package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// orderNote is a message the notes grain records; orderAsk is one it
// records and answers; orderNotes asks for what it recorded.
type (
	orderNote  struct{ s string }
	orderAsk   struct{ s string }
	orderNotes struct{}
)

func notesKind() cluster.Kind {
	return cluster.NewKind("notes", actor.PropsFromProducer(func() actor.Actor {
		var notes []string
		return actor.ReceiveFunc(func(c actor.Context) {
			switch m := c.Message().(type) {
			case orderNote:
				notes = append(notes, m.s)
			case orderAsk:
				notes = append(notes, m.s)
				c.Respond(m.s)
			case orderNotes:
				c.Respond(strings.Join(notes, ","))
			}
		})
	}))
}

// TestClusterRequestFutureKeepsOrderWithSends: messages from one caller to
// one identity arrive in the order sent, RequestFuture and CallFuture
// included, whether the grain is still to be activated (the Sends and the
// request queue on its resolution) or active. Before, a RequestFuture sent
// its message from a goroutine of its own, so the Send after it usually
// arrived first.
func TestClusterRequestFutureKeepsOrderWithSends(t *testing.T) {
	reg := fastRegistry(t)
	m := startMemberWith(t, reg, fastTiming, notesKind())
	awaitMembers(t, 1, m)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 20 {
		id := cluster.NewIdentity("notes", fmt.Sprint(i))
		var futs []*actor.Future
		for round := range 2 { // cold, then warm
			m.c.Send(id, orderNote{fmt.Sprintf("a%d", round)})
			futs = append(futs, m.c.RequestFuture(id, orderAsk{fmt.Sprintf("b%d", round)}, 10*time.Second))
			m.c.Send(id, orderNote{fmt.Sprintf("c%d", round)})
			if round == 0 {
				_, err := futs[0].Result()
				require.NoError(t, err)
			}
		}
		for _, f := range futs {
			_, err := f.Result()
			require.NoError(t, err)
		}
		got, err := cluster.Request[string](ctx, m.c, id, orderNotes{})
		require.NoError(t, err)
		require.Equal(t, "a0,b0,c0,a1,b1,c1", got, "identity %s", id)
	}
}
