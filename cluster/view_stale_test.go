package cluster_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// TestClusterPublishesViewStaleAndRestored: a member cut off its registry
// reports the stale view on the EventStream (ViewWentStale) and through
// Cluster.ViewState, and ViewRestored once views flow again. Before, a
// stale view was only a Warn line: no event, no accessor (operations
// trial's gap).
func TestClusterPublishesViewStaleAndRestored(t *testing.T) {
	reg := newRegistry(t)
	a := startMember(t, reg)
	stale, restored := make(chan *cluster.ViewWentStale, 1), make(chan *cluster.ViewRestored, 1)
	actor.Subscribe(a.sys.EventStream(), func(e *cluster.ViewWentStale) {
		select {
		case stale <- e:
		default:
		}
	})
	actor.Subscribe(a.sys.EventStream(), func(e *cluster.ViewRestored) {
		select {
		case restored <- e:
		default:
		}
	})
	require.Equal(t, cluster.ViewLive, a.c.ViewState().Status)
	key := a.c.Self().Key()
	reg.Partition(key)
	e := receive(t, stale, "no ViewWentStale while cut off the registry")
	assert.Equal(t, key, e.Member)
	assert.Error(t, e.Err)
	st := a.c.ViewState()
	assert.Equal(t, cluster.ViewStale, st.Status)
	assert.False(t, st.Since.IsZero())
	reg.Heal(key)
	r := receive(t, restored, "no ViewRestored after the registry healed")
	assert.Equal(t, key, r.Member)
	assert.Equal(t, cluster.ViewLive, a.c.ViewState().Status)
}

func receive[T any](t *testing.T, ch <-chan T, msg string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatal(msg)
		var zero T
		return zero
	}
}
