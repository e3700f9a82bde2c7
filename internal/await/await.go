package await

import "context"

// Done waits for done or for ctx, whichever comes first, and returns nil
// or ctx's error. A done channel already closed wins over a ctx already
// ended, which a select alone would pick half of the time: a part of a
// shutdown that has finished is never reported unfinished, whatever the
// ctx it was given (TestDoneWinsOverEndedCtx).
func Done(ctx context.Context, done <-chan struct{}) error {
	select {
	case <-done:
		return nil
	default:
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Closed reports whether done is closed, without waiting.
func Closed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}
