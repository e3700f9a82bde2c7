package testkit_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
)

// recorderTB is a testing.TB whose Fatalf and Errorf record instead of
// stopping, so a test can assert on the failure a testkit expectation
// reports. It embeds a testing.TB for the rest (the real test in tests, nil
// in examples, where an unexpected call panics); Cleanup, Helper, Fatalf,
// Errorf and Logf are its own. Cleanups run on finish, in reverse order.
type recorderTB struct {
	testing.TB
	mu       sync.Mutex
	fatals   []string
	errors   []string
	cleanups []func()
	// onFatal and onError, when set, are called after recording (examples
	// panic on a fatal and print an error, which breaks their Output).
	onFatal, onError func(msg string)
}

// newRecorder returns a recorder whose cleanups run at t's cleanup.
func newRecorder(t *testing.T) *recorderTB {
	r := &recorderTB{TB: t}
	t.Cleanup(r.finish)
	return r
}

func (r *recorderTB) Helper() {}

func (r *recorderTB) Cleanup(f func()) {
	r.mu.Lock()
	r.cleanups = append(r.cleanups, f)
	r.mu.Unlock()
}

func (r *recorderTB) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.mu.Lock()
	r.fatals = append(r.fatals, msg)
	r.mu.Unlock()
	if r.onFatal != nil {
		r.onFatal(msg)
	}
}

func (r *recorderTB) Errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.mu.Lock()
	r.errors = append(r.errors, msg)
	r.mu.Unlock()
	if r.onError != nil {
		r.onError(msg)
	}
}

func (r *recorderTB) Logf(string, ...any) {}

// finish runs the cleanups, last registered first.
func (r *recorderTB) finish() {
	r.mu.Lock()
	cs := r.cleanups
	r.cleanups = nil
	r.mu.Unlock()
	for _, f := range slices.Backward(cs) {
		f()
	}
}

// Fatals returns the Fatalf messages so far.
func (r *recorderTB) Fatals() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.fatals)
}

// Errors returns the Errorf messages so far.
func (r *recorderTB) Errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.errors)
}

// lastFatal returns the last Fatalf message, "" if none.
func (r *recorderTB) lastFatal() string {
	f := r.Fatals()
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}

// exampleT stands in for *testing.T in runnable examples, which cannot
// take one: a failure panics with the message, cleanups run on finish.
func exampleT() *recorderTB {
	return &recorderTB{
		onFatal: func(msg string) { panic(msg) },
		onError: func(msg string) { fmt.Println("FAIL:", msg) },
	}
}
