package middleware

import "errors"

// Sentinel errors of the standard middlewares.
var (
	// ErrInvalidRate: RateLimitConfig.PerSecond is not a positive number.
	ErrInvalidRate = errors.New("middleware: rate limit must be a positive number of messages per second")
	// ErrInvalidBurst: RateLimitConfig.Burst is below 1.
	ErrInvalidBurst = errors.New("middleware: rate limit burst must be at least 1")
	// ErrInstrument: the meter provider refused or failed to create a
	// Telemetry instrument (an error, a nil meter or instrument, a panic).
	ErrInstrument = errors.New("middleware: cannot create telemetry instrument")
)
