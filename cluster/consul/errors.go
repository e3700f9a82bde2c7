package consul

import "errors"

// Errors of the Consul provider. Join and Leave wrap them with %w together
// with the cause from the Consul client, so errors.Is matches both.
var (
	// ErrInvalidConfig: a Config field is out of range or the timing
	// relations are unsafe; the message names the field. It also matches
	// cluster.ErrInvalidProviderConfig.
	ErrInvalidConfig = errors.New("consul: invalid config")
	// ErrUnreachable: the Consul agent did not answer (connection refused,
	// timeout, TLS failure).
	ErrUnreachable = errors.New("consul: agent unreachable")
	// ErrRequestFailed: the agent answered with an error.
	ErrRequestFailed = errors.New("consul: request failed")
	// ErrRateLimited: the agent refused the request for its rate or
	// connection limits (HTTP 429). It comes wrapped together with
	// ErrRequestFailed; a renewal refused so is a failed renewal, never a
	// lost session.
	ErrRateLimited = errors.New("consul: rate limited")
	// ErrSessionInvalidated: the servers no longer know this incarnation's
	// session. It comes wrapped together with cluster.ErrLeaseRevoked.
	ErrSessionInvalidated = errors.New("consul: session invalidated")
	// ErrLockDelay: the servers refused to lock this incarnation's member
	// key because a session that held it was invalidated less than its lock
	// delay ago (15 s by default). It is not incarnation reuse; it appears
	// only when the incarnation record of the ID was removed by hand.
	ErrLockDelay = errors.New("consul: member key in lock delay")
	// ErrBadRecord: a member or released record in the KV store is not one
	// this provider wrote (bad JSON, a key that does not match it, an
	// oversized value, a member key held by no session). Such records are
	// not members; each is logged once.
	ErrBadRecord = errors.New("consul: malformed member record")
)
