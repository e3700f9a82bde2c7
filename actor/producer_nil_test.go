package actor_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

// Props that make no actor (a producer that returns nil,
// PropsFromProducer(nil), PropsFromFunc(nil)) fail the actor on its first
// turn with ErrNoActor, which names the cause. Before, it failed with
// "actor: panic in Receive: runtime error: invalid memory address or nil
// pointer dereference" and nothing named the producer.
func TestProducerReturningNilSaysSo(t *testing.T) {
	for name, props := range map[string]*actor.Props{
		"nil actor":    actor.PropsFromProducer(func() actor.Actor { return nil }),
		"nil producer": actor.PropsFromProducer(nil),
		"nil function": actor.PropsFromFunc(nil),
	} {
		t.Run(name, func(t *testing.T) {
			sys, err := actor.NewSystem(actor.SystemConfig{})
			if err != nil {
				t.Fatal(err)
			}
			defer sys.Shutdown(context.Background())
			failures := make(chan error, 1)
			sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
				if _, ok := c.Message().(*actor.Started); ok {
					c.Spawn(props)
				}
			}, actor.WithSupervisor(actor.OneForOne(0, time.Minute, func(err error) actor.Directive {
				select {
				case failures <- err:
				default:
				}
				return actor.StopDirective
			}))))
			select {
			case err := <-failures:
				if !errors.Is(err, actor.ErrNoActor) || strings.Contains(err.Error(), "nil pointer dereference") {
					t.Fatalf("the failure does not name the cause: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the child never failed")
			}
		})
	}
}
