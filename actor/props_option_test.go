package actor_test

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// Props are immutable: a PropsOption is applied by the constructors only.
// It is an interface with no exported method, so neither
// actor.WithKind("x")(props) nor an implementation outside the package
// compiles.
func TestPropsOptionsAreClosed(t *testing.T) {
	typ := reflect.TypeOf((*actor.PropsOption)(nil)).Elem()
	require.Equal(t, reflect.Interface, typ.Kind(), "a function option can be applied to built Props")
	for i := range typ.NumMethod() {
		require.False(t, typ.Method(i).IsExported(), "PropsOption has the exported method %s", typ.Method(i).Name)
	}
	// A nil option is ignored.
	require.NotNil(t, actor.PropsFromFunc(func(actor.Context) {}, nil, actor.WithKind("k")))
}

// Props without a function or producer do not panic in Spawn: the actor's
// first message fails it (a supervised failure), and it can be stopped.
func TestNilBehaviourPropsSpawn(t *testing.T) {
	sys := testkit.NewSystem(t)
	for _, props := range []*actor.Props{actor.PropsFromFunc(nil), actor.PropsFromProducer(nil)} {
		pid := sys.Root().Spawn(props)
		require.NotNil(t, pid)
		require.NoError(t, sys.Root().StopFuture(pid).Wait())
	}
}
