package remotebench

import "errors"

// ErrStalled is returned by a workload or a peer start that did not finish
// within its time limit: a lost message, a dead peer or a missed signal.
var ErrStalled = errors.New("remotebench: stalled")

// ErrBadSize is returned by a workload asked to run at a size it cannot.
var ErrBadSize = errors.New("remotebench: bad workload size")

// ErrUnknownImpl is returned for an implementation name other than
// ImplFraktor or ImplProto.
var ErrUnknownImpl = errors.New("remotebench: unknown implementation")

// ErrPeer is returned when the peer process exits before it announced its
// address, or announces something unreadable.
var ErrPeer = errors.New("remotebench: peer failed")

// ErrBadPayload is returned by a workload whose sink or echo saw a payload
// other than the one sent (a message of PayloadSize bytes): the framework
// under test delivered something else, so its figure means nothing.
var ErrBadPayload = errors.New("remotebench: payload not delivered intact")
