package actor

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
// goes out of scope. The zero value is an empty run. Not safe for
// concurrent use.
type UserRun struct {
	p   Process
	pid *PID
	n   int
	buf [userRunMax]envelope
}

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
// SendUser's do.
func (r *UserRun) Flush() {
	if r.n == 0 {
		return
	}
	run := r.buf[:r.n]
	if c, ok := r.p.(*cell); !ok || !c.mb.PostUsers(nil, run) {
		for _, e := range run {
			r.p.SendUser(r.pid, e.msg, e.sender)
		}
	}
	r.n = 0
}
