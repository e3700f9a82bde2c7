package exampletest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// childEnv marks the child process that is to be the program.
const childEnv = "FRAKTOR_EXAMPLE_CHILD"

// Main is the TestMain of an example's package: in the child process Run
// starts, it runs the program's main and exits 0 when main returns (main
// exits non-zero itself on failure); otherwise it runs the tests with
// goleak's check.
func Main(m *testing.M, main func()) {
	if os.Getenv(childEnv) == "1" {
		main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// Run runs the program (the test binary as a child, see Main) and returns
// what it wrote to stdout and stderr together. An exit other than 0, or a
// run longer than timeout (the child is killed), is an error carrying the
// output.
func Run(timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return string(out), fmt.Errorf("exampletest: the program ran longer than %v:\n%s", timeout, out)
	}
	if err != nil {
		return string(out), fmt.Errorf("exampletest: the program failed (%w):\n%s", err, out)
	}
	return string(out), nil
}
