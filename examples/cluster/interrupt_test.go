package main

import (
	"bufio"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// demoArgsEnv makes the test binary run the demo's main with these
// arguments (see TestMain), so a test can signal a real demo process.
const demoArgsEnv = "FRAKTOR_DEMO_ARGS"

// The first Ctrl-C ends the run gracefully; a second one ends the process
// at once, as a user who does not want to wait for the graceful part
// expects. Before, the signal stayed caught until the run returned: a
// second (third, ...) Ctrl-C did nothing while requests in flight timed
// out, the audit ran (up to a minute) and the members shut down.
func TestDemoSecondInterruptEndsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo in a child process for a few seconds")
	}
	cmd := exec.Command(os.Args[0])
	// The kill leaves m3's callers with requests in flight that can only
	// time out (5 s): the graceful part lasts seconds after it.
	cmd.Env = append(os.Environ(), demoArgsEnv+"=--duration 4s --grains 60 --callers 2 --dashboard off")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	// The child must start with SIGINT at its default action, as a shell
	// in a terminal starts the demo. A test binary started with SIGINT
	// ignored (a background job of a non-interactive shell, nohup-like
	// runners) passed that on, and the demo rightly returns to the
	// inherited disposition after its first Ctrl-C, so the second did
	// nothing and the demo ended gracefully. A signal this process catches
	// is reset to its default action in the child it execs: catch SIGINT
	// while starting the child.
	catch := make(chan os.Signal, 1)
	signal.Notify(catch, os.Interrupt)
	err = cmd.Start()
	signal.Stop(catch)
	require.NoError(t, err)
	// Bound the whole child, whatever happens to the test's own waits.
	guard := time.AfterFunc(2*time.Minute, func() { _ = cmd.Process.Kill() })
	defer guard.Stop()
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var out []string
	await := func(what string) {
		t.Helper()
		timeout := time.NewTimer(30 * time.Second)
		defer timeout.Stop()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("demo output ended before %q:\n%s", what, strings.Join(out, "\n"))
				}
				out = append(out, l)
				if strings.Contains(l, what) {
					return
				}
			case <-timeout.C:
				_ = cmd.Process.Kill()
				t.Fatalf("no %q in the demo's output:\n%s", what, strings.Join(out, "\n"))
			}
		}
	}
	await("KILL m3")
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	await("interrupted")
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	for l := range lines {
		out = append(out, l)
	}
	err = cmd.Wait()
	require.Error(t, err, "ended by the signal")
	require.NotContains(t, strings.Join(out, "\n"), "== summary ==", "the second Ctrl-C ended the process before the graceful part:\n%s", strings.Join(out, "\n"))
}
