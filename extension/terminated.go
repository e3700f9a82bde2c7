package extension

import (
	"context"
	"errors"
	"fmt"

	"github.com/fraktor-go/fraktor/internal/await"
)

// AwaitTerminated waits until every extension that this registry has shut
// down (ShutdownAll, or the rollback of a failed InstallAll) and that is a
// [Lingerer] has closed its Terminated channel, or until ctx ends. It
// returns nil, or one [*Error] per extension whose goroutines were still
// running when ctx ended, each wrapping ErrShutdown and ctx's error,
// joined (errors.Is works on the result). A channel found closed is never
// reported, even with a ctx that had already ended.
//
// Extensions that are not Lingerers have ended their goroutines when their
// Shutdown returned, as the [Extension] contract requires; an extension
// whose Shutdown is still running is not waited for (ShutdownAll has not
// returned). Safe from any goroutine, any number of times.
func (r *Registry[H]) AwaitTerminated(ctx context.Context) error {
	r.mu.RLock()
	list := r.lingering
	r.mu.RUnlock()
	var errs []error
	for _, l := range list {
		if err := await.Done(ctx, l.done); err != nil {
			errs = append(errs, &Error{Extension: l.name, Op: OpShutdown,
				Err: fmt.Errorf("%w: goroutines still running: %w", ErrShutdown, err)})
		}
	}
	return errors.Join(errs...)
}
