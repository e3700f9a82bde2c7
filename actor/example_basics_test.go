package actor_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/mailbox"
)

type (
	open  struct{}
	order struct{ N int }
)

// A shop that is closed until it gets open: it stashes orders meanwhile,
// then becomes its open behaviour and takes them back, in order.
func ExampleContext_Become() {
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer sys.Shutdown(context.Background())

	done := make(chan struct{})
	var openBehaviour actor.ReceiveFunc = func(c actor.Context) {
		if m, ok := c.Message().(*order); ok {
			fmt.Println("order", m.N)
			if m.N == 2 {
				close(done)
			}
		}
	}
	shop := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) { // closed
		switch c.Message().(type) {
		case *order:
			c.Stash()
		case *open:
			c.Become(openBehaviour)
			c.UnstashAll() // ahead of what is still in the mailbox
		}
	}))
	sys.Root().Send(shop, &order{N: 1})
	sys.Root().Send(shop, &open{})
	sys.Root().Send(shop, &order{N: 2})
	<-done
	// Output:
	// order 1
	// order 2
}

// A bounded mailbox with mailbox.Reject refuses what does not fit: a
// request to a full actor fails at once with ErrMailboxFull (DropNewest and
// DropOldest make the dropped message a dead letter instead). A capacity
// below 1 is 1.
func ExampleWithBoundedMailbox() {
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer sys.Shutdown(context.Background())

	release := make(chan struct{})
	busy := make(chan struct{})
	slow := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case string: // the first message holds the actor busy
			close(busy)
			<-release
		case int:
			c.Respond("ok")
		}
	}, actor.WithBoundedMailbox(1, mailbox.Reject)))
	sys.Root().Send(slow, "hold")
	<-busy
	queued := sys.Root().RequestFuture(slow, 1, time.Second)  // fills the mailbox
	refused := sys.Root().RequestFuture(slow, 2, time.Second) // does not fit
	_, err := refused.Result()
	fmt.Println(errors.Is(err, actor.ErrMailboxFull))
	close(release)
	fmt.Println(queued.Result())
	// Output:
	// true
	// ok <nil>
}

// Spawn returns nil when the spawn fails; SpawnNamed with name "" is the
// same spawn with its error.
func ExampleRootContext_SpawnNamed() {
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer sys.Shutdown(context.Background())

	fmt.Println(sys.Root().Spawn(nil) == nil)
	_, err := sys.Root().SpawnNamed(nil, "")
	fmt.Println(err)
	pid, err := sys.Root().SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), "")
	fmt.Println(pid != nil, err)
	// Output:
	// true
	// actor: nil props
	// true <nil>
}
