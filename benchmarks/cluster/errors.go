package clusterbench

import "errors"

var (
	// ErrUnknownImpl is returned for an implementation name that is
	// neither ImplFraktor nor ImplProto.
	ErrUnknownImpl = errors.New("clusterbench: unknown implementation")
	// ErrBadSize is returned for a workload size that is not positive or
	// a latency slice that is too short.
	ErrBadSize = errors.New("clusterbench: bad workload size")
	// ErrNotReady is returned when the members did not agree on a view of
	// every member in time.
	ErrNotReady = errors.New("clusterbench: cluster not ready")
	// ErrBadReply is returned when a grain or actor answered with something
	// other than the payload it was sent.
	ErrBadReply = errors.New("clusterbench: unexpected reply")
	// ErrNoIdentity is returned when no identity with the requested owner
	// was found among the candidates tried.
	ErrNoIdentity = errors.New("clusterbench: no identity with that owner")
)
