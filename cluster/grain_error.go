package cluster

import (
	"errors"
	"fmt"

	"github.com/fraktor-go/fraktor/cluster/internal/clusterpb"
)

// Codes the runtime gives a typed grain's errors. Applications choose their
// own codes for their errors (any non-empty string, for example
// "insufficient_funds").
const (
	// CodeUnknown: the grain method returned an error that is not a
	// *GrainError; the message is the error's text.
	CodeUnknown = "unknown"
	// CodeInternal: the grain method panicked. The grain's activation
	// failed and was restarted by its supervisor (state it had not stored
	// is gone); the message names the panic's value.
	CodeInternal = "internal"
	// CodeUnimplemented: the grain got a request that is none of its
	// service's methods' requests.
	CodeUnimplemented = "unimplemented"
	// CodeAbandoned: the grain method deferred its reply (DeferReply) and
	// the activation stopped or restarted before it replied.
	CodeAbandoned = "abandoned"
)

// GrainError is the error a typed grain method returned, as its caller gets
// it: the code and the message, on the caller's member, however many
// members it crossed (it travels as a protobuf message). Match it with
// errors.As, or with errors.Is against a *GrainError of the same code:
//
//	var ge *cluster.GrainError
//	if errors.As(err, &ge) && ge.Code == "insufficient_funds" { ... }
//
// A grain method returns one with NewGrainError; any other error reaches
// the caller as CodeUnknown with the error's text.
type GrainError struct {
	Code    string
	Message string
}

// NewGrainError returns a *GrainError with code and the formatted message.
func NewGrainError(code, format string, args ...any) *GrainError {
	if len(args) > 0 {
		format = fmt.Sprintf(format, args...)
	}
	return &GrainError{Code: code, Message: format}
}

func (e *GrainError) Error() string {
	if e == nil {
		return "cluster: grain error <nil>" // a typed nil in an error
	}
	return "cluster: grain error " + e.Code + ": " + e.Message
}

// Is matches a *GrainError with the same code (errors.Is(err,
// &cluster.GrainError{Code: "insufficient_funds"})); a nil one matches
// only a nil one.
func (e *GrainError) Is(target error) bool {
	t, ok := target.(*GrainError)
	if !ok || e == nil || t == nil {
		return ok && e == nil && t == nil
	}
	return t.Code == e.Code
}

// grainErrorOf turns what a grain method returned into the wire message.
func grainErrorOf(err error) *clusterpb.GrainError {
	var ge *GrainError
	if errors.As(err, &ge) {
		return &clusterpb.GrainError{Code: ge.Code, Message: ge.Message}
	}
	return &clusterpb.GrainError{Code: CodeUnknown, Message: err.Error()}
}
