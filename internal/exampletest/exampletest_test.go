package exampletest_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/internal/exampletest"
)

// exitEnv makes the child program exit with an error (as log.Fatal does).
const exitEnv = "EXAMPLETEST_FAIL"

func TestMain(m *testing.M) {
	exampletest.Main(m, func() {
		fmt.Println("the program ran")
		if os.Getenv(exitEnv) == "1" {
			fmt.Fprintln(os.Stderr, "and failed")
			os.Exit(3)
		}
	})
}

func TestRunReturnsTheProgramsOutput(t *testing.T) {
	out, err := exampletest.Run(time.Minute)
	require.NoError(t, err)
	// A test binary built with -cover adds a line of its own in the child.
	require.True(t, strings.HasPrefix(out, "the program ran\n"), "%q", out)
}

func TestRunReportsAFailedProgram(t *testing.T) {
	t.Setenv(exitEnv, "1")
	out, err := exampletest.Run(time.Minute)
	require.ErrorContains(t, err, "exit status 3")
	require.ErrorContains(t, err, "and failed")
	require.Contains(t, out, "the program ran")
}
