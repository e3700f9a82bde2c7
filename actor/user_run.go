package actor

import "fmt"

// userRunMax bounds a UserRun: the messages it holds before it posts them.
const userRunMax = 64

// UserRun collects a run of user messages for one process and posts them
// together: a local actor takes a run in one mailbox post (one reservation
// in its queue and one schedule check, instead of one per message).
// A message for another PID, or more than the run holds, posts the run
// first. Other processes get each message through SendUser.
//
// It is meant for a goroutine that delivers a stream of messages from
// elsewhere (the Remote extension's connection reader), which keeps the
// run in a local variable: it holds its messages inline, so a run costs no
// allocation, and Flush hands the local actor's mailbox a slice of them
// through concrete calls only (a run passed to an interface method would
// escape to the heap). The caller must Flush before anything else it
// delivers, so that its messages keep their order, and before the run
// goes out of scope. The zero value is an empty run without a bound
// (SetMaxBacklog). Not safe for concurrent use.
type UserRun struct {
	p       Process
	pid     *PID
	n       int
	max     int // SetMaxBacklog; 0: none
	refused int
	last    *PID // the target of the last refusal
	buf     [userRunMax]envelope
}

// ErrBacklogFull is the reason of the dead letters of the messages that a
// backlog bound refused (UserRun.SetMaxBacklog, SendUserBounded). It
// wraps ErrMailboxFull: a request whose message it was fails with
// ErrMailboxFull, as when a full bounded mailbox refuses it.
var ErrBacklogFull = fmt.Errorf("%w: its backlog reached the bound for messages from elsewhere", ErrMailboxFull)

// SetMaxBacklog bounds what Flush adds to a local actor's mailbox: a run
// is posted only as far as the mailbox then holds at most n user messages,
// and the messages beyond become dead letters with ErrBacklogFull (a
// sender that is a future, or on another node, is told at once), as a full
// bounded mailbox refuses (WithBoundedMailbox with Reject). A run that
// finds n or more queued is refused whole; one that finds fewer posts its
// first messages, those that fit, and refuses the rest, so the messages
// taken keep their order and the refused ones are a gap at the run's end.
// The bound reads the mailbox's backlog once per run
// (mailbox.Mailbox.UserBacklog), which may count up to a quarter of its
// queue's ring more than are queued while the actor is running, never
// fewer (so the mailbox holds at most n, but for other posters' messages
// queued concurrently: other runs, local senders, which no bound refuses);
// it is exact once the actor has gone idle. Processes that are not actors
// (futures, custom processes) are not bounded. n <= 0 means no bound.
func (r *UserRun) SetMaxBacklog(n int) { r.max = max(n, 0) }

// Refused returns the number of messages the bound has refused since the
// run was made (SetMaxBacklog), and the PID of the last process refused.
func (r *UserRun) Refused() (int, *PID) { return r.refused, r.last }

// Add appends msg from sender (which may be nil) for p, the process pid
// names. A run is for one pid pointer: another one posts the run first.
func (r *UserRun) Add(p Process, pid *PID, msg any, sender *PID) {
	if r.n > 0 && r.pid != pid {
		r.Flush()
	}
	r.p, r.pid = p, pid
	r.buf[r.n] = envelope{msg: msg, sender: sender}
	if r.n++; r.n == len(r.buf) {
		r.Flush()
	}
}

// Len returns the number of messages not yet posted.
func (r *UserRun) Len() int { return r.n }

// Flush posts the messages of the run, in order, and empties it. A local
// actor's default mailbox takes them in one post; a custom (bounded) one
// takes them one by one, so that its refusals become dead letters as
// SendUser's do. With a bound (SetMaxBacklog), a local actor's mailbox
// takes only what fits; the rest become dead letters.
func (r *UserRun) Flush() {
	if r.n == 0 {
		return
	}
	run := r.buf[:r.n]
	r.n = 0
	c, local := r.p.(*cell)
	var over []envelope
	if local && r.max > 0 {
		// Once per run, not per message: the queue's ticket counter and
		// published position, a cache line the post writes anyway.
		if fit := r.max - c.mb.UserBacklog(); fit < len(run) {
			fit = max(fit, 0)
			run, over = run[:fit], run[fit:]
		}
	}
	if len(run) > 0 && (!local || !c.mb.PostUsers(nil, run)) {
		for _, e := range run {
			r.p.SendUser(r.pid, e.msg, e.sender)
		}
	}
	if len(over) > 0 {
		r.refuse(c, over)
	}
}

// refuse makes the messages of over dead letters of c, as a full bounded
// mailbox's refusals are (cell.postUser). Out of Flush: the path is cold.
func (r *UserRun) refuse(c *cell, over []envelope) {
	self := c.selfPID()
	for _, e := range over {
		c.sys.deadLetter(self, e.msg, e.sender, ErrBacklogFull)
	}
	r.refused += len(over)
	r.last = r.pid
}

// SendUserBounded delivers msg from sender (which may be nil) to p, the
// process pid names, as p.SendUser does, unless p is a local actor whose
// mailbox holds maxBacklog user messages or more (see
// UserRun.SetMaxBacklog; maxBacklog <= 0: no bound): then msg becomes a
// dead letter with ErrBacklogFull and it reports false. It is for the
// messages from elsewhere that do not go in a run.
func SendUserBounded(p Process, pid *PID, msg any, sender *PID, maxBacklog int) bool {
	if c, ok := p.(*cell); ok && maxBacklog > 0 && c.mb.UserBacklog() >= maxBacklog {
		c.sys.deadLetter(c.selfPID(), msg, sender, ErrBacklogFull)
		return false
	}
	p.SendUser(pid, msg, sender)
	return true
}
