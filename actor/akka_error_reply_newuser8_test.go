package actor_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// Akka: replying Status.Failure(e) fails the asker's future with e. Here an
// error is an ordinary reply value: Result returns it as the value with a
// nil error, actor.Request[error] returns it as T, and a request for another
// type gets a *TypeMismatchError naming the error type.
func TestAkkaErrorReplyIsAValue(t *testing.T) {
	sys := testkit.NewSystem(t)
	errFunds := errors.New("insufficient funds")
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if c.Message() == "withdraw" {
			c.Respond(errFunds)
		}
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	v, err := sys.Root().RequestFuture(pid, "withdraw", 5*time.Second).Result()
	if err != nil || v != errFunds {
		t.Fatalf("Result: %v, %v", v, err)
	}
	_, err = actor.Request[string](ctx, sys.Root(), pid, "withdraw")
	var tm *actor.TypeMismatchError
	if !errors.As(err, &tm) || errors.Is(err, errFunds) {
		t.Fatalf("Request[string]: %v", err)
	}
	e, err := actor.Request[error](ctx, sys.Root(), pid, "withdraw")
	if err != nil || e != errFunds {
		t.Fatalf("Request[error]: %v, %v", e, err)
	}
}
