package actor

// ReenterAfter: a continuation is a Process of its own, the target of a
// PipeTo on the future, so the future needs nothing new. When the future
// completes, the continuation goes through the owner's mailbox as a user
// message; on the owner's turn its callback runs with the future's result.
//
// So the callback runs after the messages queued before the future
// completed and before those queued after, never concurrently with
// Receive, and not while the actor is suspended (a failure) or stopping.
// It is dropped, without running, when the actor stops (the mailbox is
// closed) or restarts before it runs (the incarnation it was made in is
// gone). Inside the callback Context.Message and Sender are nil: Stash does
// nothing (there is no message to stash) and Respond is a dead letter;
// Become and BecomeStacked change the behaviour for the messages that
// follow, as they do inside Receive. A panic in the callback is the actor's
// failure, as one in Receive. The callback does not pass through receive
// middleware.

type continuation struct {
	owner *cell
	fut   *Future
	fn    func(res any, err error)
	inc   uint32
	pid   PID
	ref   procRef
}

func (c *cell) ReenterAfter(fut *Future, fn func(res any, err error)) {
	if fut == nil || fn == nil {
		return
	}
	k := &continuation{owner: c, fut: fut, fn: fn, inc: c.ext().incarnation}
	k.pid.Address, k.pid.ID = c.sys.Address(), "continuation"
	k.ref.p = k
	k.pid.cacheRef(&k.ref)
	fut.PipeTo(&k.pid)
}

// SendUser implements Process: the future completed.
func (k *continuation) SendUser(_ *PID, _ any, _ *PID) {
	k.owner.postTick(k)
}

// SendSystem implements Process; a continuation takes no system messages.
func (k *continuation) SendSystem(_ *PID, _ SystemMessage) {}

// StopProcess implements Process.
func (k *continuation) StopProcess(_ *PID) {}

func (c *cell) onContinuation(k *continuation) {
	if k.owner != c || c.state != stateAlive || c.x == nil || c.x.incarnation != k.inc {
		return
	}
	res, err := k.fut.Result() // completed: it does not block
	c.msg, c.sender = nil, nil
	k.fn(res, err)
}
