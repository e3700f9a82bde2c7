package clusterbench

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// RoundTrips makes len(lat) sequential requests with call and stores each
// one's duration in lat.
func RoundTrips(ctx context.Context, lat []time.Duration, call func(context.Context) error) error {
	if len(lat) == 0 {
		return ErrBadSize
	}
	for i := range lat {
		start := time.Now()
		if err := call(ctx); err != nil {
			return fmt.Errorf("round trip %d: %w", i, err)
		}
		lat[i] = time.Since(start)
	}
	return nil
}

// IdentityOwnedBy returns the first identity prefix-0, prefix-1, ... that
// member owner owns by the view of member from.
func IdentityOwnedBy(c Cluster, from, owner int, prefix string) (string, error) {
	for i := range 10000 {
		id := prefix + "-" + strconv.Itoa(i)
		o, err := c.Owner(from, id)
		if err != nil {
			return "", err
		}
		if o == owner {
			return id, nil
		}
	}
	return "", ErrNoIdentity
}

// ColdIdentities returns n new identities (among prefix-0, prefix-1, ...)
// whose owner by the view of member from is from (local) or another
// member (!local). Choosing them is the harness's work, not activation's:
// it stays out of the timed region (Cold).
func ColdIdentities(c Cluster, from int, local bool, prefix string, n int) ([]string, error) {
	if n <= 0 {
		return nil, ErrBadSize
	}
	ids := make([]string, 0, n)
	for i := 0; len(ids) < n; i++ {
		id := prefix + "-" + strconv.Itoa(i)
		o, err := c.Owner(from, id)
		if err != nil {
			return nil, err
		}
		if (o == from) == local {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// Cold activates the new identities ids (from ColdIdentities) from member
// from, each with its first request, and stores each first request's
// duration in lat (len(lat) >= len(ids)). It makes nothing but those
// requests, so a benchmark that times it times activations alone: the
// owner computation it once did per candidate identity (about three per
// local activation with three members) cost protoactor-go's harness
// ~3.5 µs and 29 allocations a call against fraktor-go's ~1 µs and 10,
// inside the timed mean and the allocs/op.
func Cold(ctx context.Context, c Cluster, from int, ids []string, lat []time.Duration) error {
	if len(ids) == 0 || len(lat) < len(ids) {
		return ErrBadSize
	}
	msg := payload()
	for i, id := range ids {
		start := time.Now()
		if err := c.Request(ctx, from, id, msg); err != nil {
			return fmt.Errorf("cold %s: %w", id, err)
		}
		lat[i] = time.Since(start)
	}
	return nil
}

// Identities returns n identity names prefix-0 ... prefix-(n-1).
func Identities(prefix string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = prefix + "-" + strconv.Itoa(i)
	}
	return ids
}

// Throughput makes total requests over ids from perMember goroutines on
// every member (each caller walks ids from its own offset) and returns how
// many succeeded; it stops at the first error.
func Throughput(ctx context.Context, c Cluster, ids []string, perMember, total int) (int, error) {
	if len(ids) == 0 || perMember <= 0 || total <= 0 {
		return 0, ErrBadSize
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next, done atomic.Int64
		wg         sync.WaitGroup
		once       sync.Once
		firstErr   error
	)
	callers := c.Members() * perMember
	for g := range callers {
		wg.Go(func() {
			msg := payload()
			from := g % c.Members()
			off := g * len(ids) / callers
			for {
				n := next.Add(1)
				if n > int64(total) || ctx.Err() != nil {
					return
				}
				if err := c.Request(ctx, from, ids[(off+int(n))%len(ids)], msg); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	return int(done.Load()), firstErr
}

// IdleBytes activates the grains ids from member 0 (with parallel callers,
// so the activation time stays short) and returns the growth of the heap
// in use after a GC, divided by len(ids).
func IdleBytes(ctx context.Context, c Cluster, ids []string, parallel int) (float64, error) {
	before := heapInUse()
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	for range parallel {
		wg.Go(func() {
			msg := payload()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(ids) || ctx.Err() != nil {
					return
				}
				if err := c.Request(ctx, 0, ids[i], msg); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return 0, firstErr
	}
	after := heapInUse()
	return float64(int64(after)-int64(before)) / float64(len(ids)), nil
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}
