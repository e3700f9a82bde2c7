package benchmarks

import "errors"

// ErrStalled is returned by a workload that did not finish within
// stallLimit: a lost message or a missed completion signal.
var ErrStalled = errors.New("benchmarks: workload stalled")

// ErrBadSize is returned by a workload asked to run at a size it cannot.
var ErrBadSize = errors.New("benchmarks: bad workload size")
