package remote

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBlockList(t *testing.T) {
	b := NewBlockList()
	var mu sync.Mutex
	var got []BlockEvent
	cancel := b.Subscribe(func(e BlockEvent) { mu.Lock(); got = append(got, e); mu.Unlock() })
	b.Block("n1", "addr:1", "")
	b.Block("n1") // no change, no event
	assert.True(t, b.IsBlocked("x", "n1"))
	assert.False(t, b.IsBlocked("x", ""))
	assert.Equal(t, []string{"addr:1", "n1"}, b.Blocked())
	b.Unblock("n1", "never")
	assert.False(t, b.IsBlocked("n1"))
	cancel()
	cancel()
	b.Block("n2")
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []BlockEvent{
		{Blocked: true, Keys: []string{"n1", "addr:1"}},
		{Blocked: false, Keys: []string{"n1"}},
	}, got)
}

func TestBlockListConcurrent(t *testing.T) {
	b := NewBlockList()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			k := string(rune('a' + i))
			for range 200 {
				b.Block(k)
				_ = b.IsBlocked(k)
				b.Unblock(k)
			}
		})
	}
	wg.Wait()
	assert.Empty(t, b.Blocked())
}
