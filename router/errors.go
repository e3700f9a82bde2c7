package router

import (
	"errors"
	"fmt"

	"github.com/fraktor-go/fraktor/actor"
)

var (
	// ErrNoRoutees: the router had no routee when a message arrived. The
	// message is a dead letter; a waiting future fails with an error that
	// wraps ErrNoRoutees and actor.ErrDeadLetter.
	ErrNoRoutees = errors.New("router: no routees")
	// ErrNoHashKey: a consistent-hash router got a message that implements
	// neither Hashable nor HashableBytes. The message is a dead letter.
	ErrNoHashKey = errors.New("router: message has no hash key")
	// ErrStopped: the router has stopped (a message that reaches it
	// afterwards is a dead letter), or stopped while a scatter-gather
	// request was waiting for its first answer.
	ErrStopped = errors.New("router: stopped")
	// ErrAllRouteesFailed: every routee of a scatter-gather request turned
	// out to be gone (each answered with a dead letter).
	ErrAllRouteesFailed = errors.New("router: every routee failed")
	// ErrCycle: SpawnGroup was given a routee that is a router on the same
	// system whose routees lead back to the new router (routing runs on
	// the sender's goroutine, so such a cycle would recurse until the
	// stack overflows). An AddRoutee that would close a cycle is ignored
	// (and logged), as one naming the router itself is.
	ErrCycle = errors.New("router: routees would form a cycle of routers")
	// ErrInvalidConfig: SpawnPool or SpawnGroup was given arguments that
	// cannot work (nil props, a negative size, a non-positive timeout).
	ErrInvalidConfig = errors.New("router: invalid config")
)

// Reasons handed to actor.System.DeadLetter: they wrap actor.ErrDeadLetter
// too, so a caller of actor.Request can test for either. Built once, so a
// refused message allocates nothing for its reason.
var (
	reasonNoRoutees = fmt.Errorf("%w: %w", actor.ErrDeadLetter, ErrNoRoutees)
	reasonNoHashKey = fmt.Errorf("%w: %w", actor.ErrDeadLetter, ErrNoHashKey)
	reasonStopped   = fmt.Errorf("%w: %w", actor.ErrDeadLetter, ErrStopped)
	reasonTimeout   = fmt.Errorf("router: scatter-gather: %w", actor.ErrTimeout)
	reasonAllFailed = fmt.Errorf("%w: %w", actor.ErrDeadLetter, ErrAllRouteesFailed)
	// A nil *BroadcastMessage carries no message to broadcast.
	reasonNilBroadcast = fmt.Errorf("%w: router: nil *BroadcastMessage", actor.ErrDeadLetter)
)
