package consul

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestViewBackoff(t *testing.T) {
	t.Run("blocking queries always failing keep growing", func(t *testing.T) {
		// Each blocking failure is followed by a plain query that passes
		// (a proxy that cuts long requests): the attempts still grow.
		var b viewBackoff
		for want := 1; want <= 10; want++ {
			require.Equal(t, want, b.failed(true))
			b.succeeded(false)
		}
	})
	t.Run("an outage is forgiven once a plain query passes", func(t *testing.T) {
		var b viewBackoff
		require.Equal(t, 1, b.failed(true)) // the blocking query in flight
		for want := 2; want <= 20; want++ {
			require.Equal(t, want, b.failed(false))
		}
		b.succeeded(false)
		require.Equal(t, 2, b.failed(true))
		require.Equal(t, 3, b.failed(false))
	})
	t.Run("a blocking success ends the backoff", func(t *testing.T) {
		var b viewBackoff
		b.failed(true)
		b.failed(false)
		b.succeeded(false)
		b.failed(true)
		b.succeeded(true)
		require.Equal(t, 1, b.failed(true))
	})
}
