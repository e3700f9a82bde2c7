package remote

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"
)

// BlockEvent is published by a BlockList when its content changes.
type BlockEvent struct {
	Blocked bool     // true: Keys were blocked; false: unblocked
	Keys    []string // the node IDs or addresses that changed state (owned by the receiver)
}

// BlockList is a thread-safe set of blocked nodes, each named by node ID or by
// advertised address. A Node refuses handshakes from and to a blocked node,
// closes existing connections to it, and hands what would be sent to it to
// the Undelivered hook with ErrBlocked.
//
// Subscribers are called synchronously, after the change, on the goroutine
// that called Block/Unblock, in subscription order; they must not block and
// must not call Subscribe or the returned cancel function.
type BlockList struct {
	mu     sync.Mutex                          // serializes changes
	keys   atomic.Pointer[map[string]struct{}] // copy on write: readers take no lock
	subs   []*blockSub
	subsMu sync.Mutex // orders notifications; taken before mu
}

type blockSub struct{ fn func(BlockEvent) }

// NewBlockList returns an empty BlockList.
func NewBlockList() *BlockList {
	b := &BlockList{}
	b.keys.Store(&map[string]struct{}{})
	return b
}

// Block adds keys (node IDs or addresses) and publishes the ones that were
// not blocked yet. Empty keys are ignored.
func (b *BlockList) Block(keys ...string) { b.change(true, keys) }

// Unblock removes keys and publishes the ones that were blocked.
func (b *BlockList) Unblock(keys ...string) { b.change(false, keys) }

func (b *BlockList) change(block bool, keys []string) {
	b.subsMu.Lock()
	defer b.subsMu.Unlock()
	var changed []string
	b.mu.Lock()
	next := maps.Clone(*b.keys.Load())
	for _, k := range keys {
		if k == "" {
			continue
		}
		_, had := next[k]
		switch {
		case block && !had:
			next[k] = struct{}{}
			changed = append(changed, k)
		case !block && had:
			delete(next, k)
			changed = append(changed, k)
		}
	}
	if len(changed) > 0 {
		b.keys.Store(&next)
	}
	subs := slices.Clone(b.subs)
	b.mu.Unlock()
	if len(changed) == 0 {
		return
	}
	for _, s := range subs {
		s.fn(BlockEvent{Blocked: block, Keys: slices.Clone(changed)})
	}
}

// IsBlocked reports whether any of keys is blocked.
func (b *BlockList) IsBlocked(keys ...string) bool {
	m := *b.keys.Load()
	if len(m) == 0 {
		return false
	}
	for _, k := range keys {
		if _, ok := m[k]; ok && k != "" {
			return true
		}
	}
	return false
}

// active reports whether anything is blocked: when not, the send path skips
// its block checks.
func (b *BlockList) active() bool { return len(*b.keys.Load()) > 0 }

// Blocked returns the blocked keys, sorted.
func (b *BlockList) Blocked() []string {
	m := *b.keys.Load()
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Subscribe registers fn for every later change and returns a function that
// removes it (idempotent).
func (b *BlockList) Subscribe(fn func(BlockEvent)) (cancel func()) {
	s := &blockSub{fn: fn}
	b.mu.Lock()
	b.subs = append(b.subs, s)
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.subs = slices.DeleteFunc(b.subs, func(x *blockSub) bool { return x == s })
	}
}
