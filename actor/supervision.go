package actor

import (
	"time"

	"github.com/fraktor-go/fraktor/scheduler"
)

// Directive is a supervisor's decision about a failed child.
type Directive uint8

const (
	// ResumeDirective keeps the actor and its state; the failing message is dropped.
	ResumeDirective Directive = iota
	// RestartDirective replaces the actor with a fresh instance from its producer.
	RestartDirective
	// StopDirective stops the actor.
	StopDirective
	// EscalateDirective fails the supervisor itself with the same error.
	EscalateDirective
)

func (d Directive) String() string {
	switch d {
	case ResumeDirective:
		return "Resume"
	case RestartDirective:
		return "Restart"
	case StopDirective:
		return "Stop"
	case EscalateDirective:
		return "Escalate"
	}
	return "Directive(?)"
}

// Decider maps a failure to a directive.
type Decider func(err error) Directive

// DefaultDecider restarts on every failure.
func DefaultDecider(error) Directive { return RestartDirective }

// RestartStats records a child's restarts; the child owns it and its
// supervisor reads and updates it while the child is suspended.
type RestartStats struct {
	times []time.Time
}

// Restarts returns the number of restarts recorded within d before now
// (all restarts when d ≤ 0).
func (s *RestartStats) Restarts(now time.Time, d time.Duration) int {
	if d <= 0 {
		return len(s.times)
	}
	n := 0
	for _, t := range s.times {
		if now.Sub(t) <= d {
			n++
		}
	}
	return n
}

func (s *RestartStats) record(now time.Time, keep time.Duration) {
	if keep > 0 {
		i := 0
		for i < len(s.times) && now.Sub(s.times[i]) > keep {
			i++
		}
		s.times = s.times[i:]
	}
	s.times = append(s.times, now)
}

// Failure describes a failed child to its supervisor.
type Failure struct {
	Child   *PID
	Err     error
	Message any // the message being processed, if any
	// Consecutive counts the child's failures without a successful message
	// in between, starting at 1.
	Consecutive int
	// RetryAfter is the S6 backoff for this failure: 100 ms × 2^(n-1), at most 10 s.
	RetryAfter time.Duration
	Stats      *RestartStats
}

// Supervisor is what a strategy acts on: the parent of the failed child.
type Supervisor interface {
	Children() []*PID
	ResumeChildren(pids ...*PID)
	RestartChildren(pids ...*PID)
	// RestartChildrenAfter restarts the children after d on the system clock.
	RestartChildrenAfter(d time.Duration, pids ...*PID)
	StopChildren(pids ...*PID)
	// Escalate fails the supervisor itself with the child's failure.
	Escalate(f Failure)
	Now() time.Time
}

// SupervisorStrategy decides what happens to a failed child. HandleFailure
// runs inside the supervisor's invocation and must not block.
type SupervisorStrategy interface {
	HandleFailure(sup Supervisor, f Failure)
}

// OneForOne applies the decider's directive to the failed child alone. A
// child restarted more than maxRestarts times within window is stopped
// instead (maxRestarts < 0: no limit).
func OneForOne(maxRestarts int, window time.Duration, decider Decider) SupervisorStrategy {
	if decider == nil {
		decider = DefaultDecider
	}
	return &oneForOne{max: maxRestarts, window: window, decide: decider}
}

// AllForOne applies the decider's directive to all children of the supervisor.
func AllForOne(maxRestarts int, window time.Duration, decider Decider) SupervisorStrategy {
	if decider == nil {
		decider = DefaultDecider
	}
	return &oneForOne{max: maxRestarts, window: window, decide: decider, all: true}
}

// ExponentialBackoff restarts a failed child after Failure.RetryAfter
// (100 ms × 2^(n-1) capped at 10 s, S6), so a crash-looping actor slows down
// instead of spinning. The count resets when the child processes a message
// successfully. It never stops the child and has no decider: a strategy
// that gives up after some failures is one of your own
// (ExampleSupervisorStrategy_backoffThenStop).
func ExponentialBackoff() SupervisorStrategy { return backoffStrategy{} }

// DefaultStrategy is OneForOne(10, 10s, DefaultDecider).
func DefaultStrategy() SupervisorStrategy { return OneForOne(10, 10*time.Second, nil) }

type oneForOne struct {
	max    int
	window time.Duration
	decide Decider
	all    bool
}

func (s *oneForOne) HandleFailure(sup Supervisor, f Failure) {
	targets := []*PID{f.Child}
	if s.all {
		targets = sup.Children()
	}
	switch s.decide(f.Err) {
	case ResumeDirective:
		sup.ResumeChildren(f.Child)
	case RestartDirective:
		now := sup.Now()
		if f.Stats != nil && s.max >= 0 && f.Stats.Restarts(now, s.window) >= s.max {
			sup.StopChildren(targets...)
			return
		}
		if f.Stats != nil && s.max >= 0 {
			// Only a limit reads them; unlimited, with no window to prune
			// by, they grew by one per restart for ever
			// (TestOneForOneUnlimitedKeepsNoRestartTimes).
			f.Stats.record(now, s.window)
		}
		sup.RestartChildren(targets...)
	case StopDirective:
		sup.StopChildren(targets...)
	case EscalateDirective:
		sup.Escalate(f)
	}
}

type backoffStrategy struct{}

func (backoffStrategy) HandleFailure(sup Supervisor, f Failure) {
	d := f.RetryAfter
	if d <= 0 {
		d = scheduler.Backoff(max(f.Consecutive-1, 0))
	}
	sup.RestartChildrenAfter(d, f.Child)
}
