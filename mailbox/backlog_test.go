package mailbox_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/mailbox"
)

// UserBacklog is the posters' count of queued user messages: for the
// default queue it reads what posts and the consumer published (exact once
// the consumer has gone idle), for a custom queue its length; a poster
// calls it while the consumer runs (the race detector checks the default
// queue's reads; UserLen is the consumer's).
func TestMailboxUserBacklog(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    mailbox.Queue[int]
	}{
		{"default", nil},
		{"bounded", mailbox.NewBounded[int](1000, mailbox.Reject)},
		{"priority", mailbox.NewPriority[int](2, func(int) int { return 0 })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mb, _ := newMailbox(tc.q)
			require.Zero(t, mb.UserBacklog())
			for i := range 300 {
				require.NoError(t, mb.PostUser(nil, i))
			}
			require.True(t, tc.q != nil || mb.PostUsers(nil, make([]int, 64)))
			want := 300
			if tc.q == nil {
				want += 64
			}
			require.Equal(t, want, mb.UserBacklog())

			done := make(chan int)
			go func() { // the consumer, while a poster reads the backlog
				n := 0
				for ; n < 100; n++ {
					if _, ok := mb.PopUser(); !ok {
						break
					}
				}
				done <- n
			}()
			for range 100 {
				b := mb.UserBacklog()
				require.LessOrEqual(t, b, want)
				require.GreaterOrEqual(t, b, want-100)
			}
			require.Equal(t, 100, <-done)
			_ = mb.SetIdle() // the consumer goes idle: its position is published (work is left: it re-claims)
			require.Equal(t, want-100, mb.UserBacklog(), "exact once the consumer went idle")
		})
	}
}
