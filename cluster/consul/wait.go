package consul

import (
	"context"
	"time"
)

// waitCtx waits for d or until ctx ends; it reports whether d passed.
func waitCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
