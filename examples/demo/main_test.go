package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/internal/exampletest"
)

func TestMain(m *testing.M) { exampletest.Main(m, main) }

// The local demo prints what README.md says it shows, step by step, and
// exits 0.
func TestDemoSteps(t *testing.T) {
	out, err := exampletest.Run(time.Minute)
	require.NoError(t, err)
	t.Log(out)
	for _, want := range []string{
		"  balance = 42 (err <nil>)",
		"  [account-42] restarting after a failure",
		"  balance after restart = 0 (err <nil>)",
		"  err = actor: timeout",
		"  terminated: local/account-42 (err <nil>)",
		"  err = actor: dead letter: local/account-42",
		"8. the OpenTelemetry metrics the run produced",
	} {
		require.Contains(t, out, want)
	}
	require.Regexp(t, `(?m)^  shut down in \S+; dead letters so far: 1$`, out)
	require.Regexp(t, `(?m)^  fraktor\.actor\.spawned +kind=worker +10000$`, out)
	require.Regexp(t, `(?m)^  fraktor\.actor\.stopped +kind=worker +10000$`, out)
	require.Regexp(t, `(?m)^  fraktor\.actor\.restarted +kind=account +1$`, out)
}
