package router

import "github.com/fraktor-go/fraktor/actor"

// Hashable is a message that names its consistent-hash key. Messages with
// the same key go to the same routee while the routees do not change.
type Hashable interface{ HashKey() string }

// HashableBytes is Hashable with the key as bytes; HashKey wins when a
// message implements both. The router does not keep the slice.
type HashableBytes interface{ HashKeyBytes() []byte }

// BroadcastMessage sent to any router delivers Message to every routee,
// whatever the router's strategy, each with the BroadcastMessage's sender.
type BroadcastMessage struct{ Message any }

// Management messages: sent to the router's PID, they go to the router's
// own actor, which handles them in arrival order. A request (a sender that
// is not nil) is answered with *Routees, the set after the change, so the
// sender knows that later messages are routed over it.
type (
	// AddRoutee adds PID to the routees (a group's or a pool's; a PID added
	// to a pool is not stopped with it). Adding a present routee, or the
	// router itself, does nothing.
	AddRoutee struct{ PID *actor.PID }
	// RemoveRoutee takes PID out of the routees; a pool's own routee is
	// then poisoned (it handles what was routed to it first). A message
	// routed concurrently with the removal can reach it after the
	// PoisonPill: that one is a dead letter.
	RemoveRoutee struct{ PID *actor.PID }
	// Resize makes a pool Size routees: it spawns the missing ones, or
	// removes and poisons the newest ones. A group ignores it (and answers
	// with its routees unchanged).
	Resize struct{ Size int }
	// GetRoutees asks for the current routees.
	GetRoutees struct{}
	// Routees is the answer to the management messages: the routees in
	// routing order. The slice is the caller's.
	Routees struct{ PIDs []*actor.PID }
)

// management marks the messages the router's actor handles.
type management interface{ management() }

func (*AddRoutee) management()    {}
func (*RemoveRoutee) management() {}
func (*Resize) management()       {}
func (*GetRoutees) management()   {}
