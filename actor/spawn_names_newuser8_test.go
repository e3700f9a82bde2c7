package actor_test

// Defects found by newuser8; these tests fail on the code they were written
// against (see the report).

import (
	"context"
	"errors"
	"testing"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// RootContext.SpawnNamed after Shutdown fails with ErrSystemStopped, as
// documented, but also returns a PID ("local/c"): a caller that tests the
// PID rather than the error goes on with an actor that never ran. The
// other failures (name taken, nil Props, a SpawnMiddleware's refusal)
// return nil, and Spawn returns nil for every failure (docs/actors.md,
// "Spawning").
func TestNewuser8SpawnNamedAfterShutdownReturnsNoPID(t *testing.T) {
	sys := testkit.NewSystem(t)
	if err := sys.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	pid, err := sys.Root().SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), "c")
	if !errors.Is(err, actor.ErrSystemStopped) {
		t.Fatalf("err %v", err)
	}
	if pid != nil {
		t.Fatalf("SpawnNamed failed with %v but returned PID %v", err, pid)
	}
}

// LookupPath's doc: "A name that contains "/" cannot be looked up by path."
// But SpawnNamed accepts such a name, PathOf gives the actor a path, and
// LookupPath of that path returns another actor: a top-level "lobby/room"
// has the path of the child "room" of the top-level "lobby", and
// LookupPath(PathOf(x)) is that child. Expected: SpawnNamed refuses a name
// with "/" (ErrInvalidName, as Akka refuses it), or LookupPath reports
// false for a path it cannot resolve unambiguously, never another actor.
func TestNewuser8LookupPathOfPathOfIsAnotherActor(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	sys.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			_, _ = c.SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), "room")
		}
	}), "lobby")
	sys.RunUntilIdle()
	odd, err := sys.Root().SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), "lobby/room")
	if err != nil {
		return // a name with "/" refused: fine
	}
	path, ok := sys.PathOf(odd)
	if !ok {
		t.Fatalf("PathOf(%v) failed", odd)
	}
	if back, ok := sys.LookupPath(path); ok && !back.Equal(odd) {
		t.Fatalf("LookupPath(PathOf(%v)) = %v, another actor (path %q)", odd, back, path)
	}
}
