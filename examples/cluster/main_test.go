package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fraktor-go/fraktor/cluster"
)

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(demoArgsEnv); ok {
		// A child process of TestDemoSecondInterruptEndsAtOnce: be the demo.
		os.Args = append([]string{"cluster"}, strings.Fields(args)...)
		main()
		return
	}
	goleak.VerifyTestMain(m)
}

// A short run of the whole demo: a member is killed, its accounts start
// again elsewhere, the check holds and the exit code is 0.
func TestDemoRunWithKill(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo for 8 s")
	}
	var out bytes.Buffer
	o := options{members: 3, duration: 8 * time.Second, grains: 60, callers: 2, dashboard: "127.0.0.1:0"}
	code := run(context.Background(), o, &out)
	t.Log(out.String())
	require.Equal(t, 0, code)
	s := out.String()
	require.Contains(t, s, "dashboard: http://127.0.0.1:")
	require.Contains(t, s, "KILL m3 abruptly")
	require.Regexp(t, `killed m3 hosted \d+ accounts; \d+ re-activated elsewhere`, s)
	require.Regexp(t, `\nactivations started per member: m1 \d+, m2 \d+, m3 \d+ \(killed\)\n`, s)
	require.Contains(t, s, "consistency check: sum of balances")
	require.True(t, strings.HasSuffix(strings.TrimSpace(s), ": OK"), "the check holds")
	require.GreaterOrEqual(t, strings.Count(s, " req/s "), 5, "a progress line every second")
}

func TestParseFlags(t *testing.T) {
	o, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	require.Equal(t, options{members: 3, duration: 20 * time.Second, grains: 300, callers: 4, dashboard: "127.0.0.1:8080"}, o)
	_, err = parseFlags([]string{"--help"}, io.Discard)
	require.ErrorIs(t, err, flag.ErrHelp)
	_, err = parseFlags([]string{"--join"}, io.Discard)
	require.ErrorContains(t, err, "--join needs --consul")
	// Absurd values are refused, not run until memory runs out.
	for _, bad := range [][]string{{"--grains", "1000000000"}, {"--callers", "0"}, {"--callers", "100000000"},
		{"--members", "1000"}, {"--duration", "1000h"}, {"--duration", "-1s"}} {
		_, err = parseFlags(bad, io.Discard)
		require.ErrorContains(t, err, bad[0]+" must be", "%v", bad)
	}
	o, err = parseFlags([]string{"--join", "--consul", "127.0.0.1:8500", "--dashboard", "off"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 1, o.members)
	require.Empty(t, o.dashboard)
	_, err = parseFlags([]string{"--grains", "0"}, io.Discard)
	require.Error(t, err)
	// An address without a port was accepted, and serveDashboard's
	// fallback for a taken port then listened on ":0": every interface.
	for _, bad := range []string{"localhost", "127.0.0.1", "8080"} {
		_, err = parseFlags([]string{"--dashboard", bad}, io.Discard)
		require.ErrorContains(t, err, "--dashboard", bad)
	}
	o, err = parseFlags([]string{"--dashboard", "localhost:0"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "localhost:0", o.dashboard)
}

// The store refuses a write from an activation older than the newest one
// that loaded the account.
func TestStoreFencesStaleActivations(t *testing.T) {
	st := newStore()
	old, next := cluster.FencingToken{Epoch: 1, Seq: 1}, cluster.FencingToken{Epoch: 2, Seq: 1}
	_, err := st.load("a", old)
	require.NoError(t, err)
	require.NoError(t, st.commit("a", old, "r1", 10, true))
	s, err := st.load("a", next)
	require.NoError(t, err)
	require.Equal(t, int64(10), s.balance)
	require.ErrorIs(t, st.commit("a", old, "r2", 5, true), errStale)
	_, err = st.load("a", old)
	require.ErrorIs(t, err, errStale)
	require.NoError(t, st.commit("a", next, "r2", -4, true))
	s, _ = st.load("a", next)
	require.Equal(t, int64(6), s.balance)
}

// The check is sound: it fails for each way the ledgers can disagree with
// what the callers were told, and counts a failed request exactly when the
// ledger shows it applied.
func TestCheck(t *testing.T) {
	base := func() (*outcomes, map[string]*AuditResult) {
		o := newOutcomes()
		o.acked["d1"] = op{"a", 50}
		o.acked["w1"] = op{"a", -20}
		o.refused["w2"] = op{"a", -100}
		o.failed["d2"] = op{"b", 7}  // applied although it failed
		o.failed["d3"] = op{"b", 11} // failed and not applied
		return o, map[string]*AuditResult{
			"a": {Balance: 30, Applied: map[string]int64{"d1": 50, "w1": -20}},
			"b": {Balance: 7, Applied: map[string]int64{"d2": 7}},
		}
	}
	o, l := base()
	v := check(o, l, "")
	require.True(t, v.ok(), v.problems)
	require.Equal(t, int64(7), v.failedApplied)
	require.Equal(t, 1, v.failedAppliedN)
	require.Equal(t, 1, v.failedLostN)

	for _, tc := range []struct {
		name   string
		break_ func(o *outcomes, l map[string]*AuditResult)
		want   string
	}{
		{"acknowledged request lost", func(o *outcomes, l map[string]*AuditResult) {
			delete(l["a"].Applied, "d1")
			l["a"].Balance = -20
		}, "not in the ledger"},
		{"refused request applied", func(o *outcomes, l map[string]*AuditResult) {
			l["a"].Applied["w2"] = -100
			l["a"].Balance = -70
		}, "acknowledged as refused but applied"},
		{"request nobody sent", func(o *outcomes, l map[string]*AuditResult) {
			l["b"].Applied["x"] = 1
			l["b"].Balance = 8
		}, "that no caller sent"},
		{"balance off its ledger", func(o *outcomes, l map[string]*AuditResult) {
			l["b"].Balance = 9
		}, "ledger sums to"},
		{"amount changed", func(o *outcomes, l map[string]*AuditResult) {
			l["a"].Applied["d1"] = 51
			l["a"].Balance = 31
		}, "applied as +51"},
		{"account missing", func(o *outcomes, l map[string]*AuditResult) {
			delete(l, "a")
		}, "missing from the audit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, l := base()
			tc.break_(o, l)
			v := check(o, l, "")
			require.False(t, v.ok())
			require.Contains(t, strings.Join(v.problems, "\n"), tc.want)
		})
	}
}

// Failures of the killed member's callers after the kill are counted apart:
// they were in flight on a member cut off from the others.
// --join: what finished runs' entries left behind (kvStore.compact) is
// part of an account's balance, and the check adds it to the ledger.
func TestCheckCountsCarried(t *testing.T) {
	o := newOutcomes()
	o.acked["p-1"] = op{"a", 5}
	l := map[string]*AuditResult{"a": {Balance: 15, Carried: 7, Applied: map[string]int64{"p-1": 5, "q-1": 3}}}
	v := check(o, l, "p")
	require.True(t, v.ok(), v.problems)
	l["a"].Carried = 6
	v = check(o, l, "p")
	require.False(t, v.ok())
	require.Contains(t, strings.Join(v.problems, "\n"), "balance 15 but its ledger sums to 14 (6 carried)")
}

func TestOutcomesAttributeKilledMember(t *testing.T) {
	o := newOutcomes()
	timeout := fmt.Errorf("%w: acct-1", cluster.ErrTimeout)
	o.record("m3", "m3-c0-1", op{"a", 5}, nil, timeout, time.Second) // before the kill
	o.markKilled("m3")
	o.record("m3", "m3-c1-7", op{"b", 5}, nil, timeout, time.Second)
	o.record("m1", "m1-c0-9", op{"c", 5}, nil, timeout, time.Second)
	require.Equal(t, 1, o.lostKill)
	require.Len(t, o.failed, 3)
	n := 0
	for c, k := range o.causes {
		if strings.HasPrefix(c, "in flight on m3 when it was killed: ") {
			n += k
		}
	}
	require.Equal(t, 1, n)
}

// Two runs (two seeds) of the same member never share a request ID prefix:
// --join keeps ledgers across runs, and a member's name is its address.
func TestCallerNamesDifferPerRun(t *testing.T) {
	a, b := callerName("127.0.0.1:4000", 1, 0), callerName("127.0.0.1:4000", 2, 0)
	require.NotEqual(t, a, b)
	require.NotEqual(t, callerName("m1", 1, 0), callerName("m1", 1, 1))
}

// A run in which no deposit or withdrawal was acknowledged (every request
// timed out: the demo with --consul waits out 12 s before activating) has
// nothing to check: 0 == 0 held and the check printed OK, exit 0.
func TestCheckFailsWithNothingAcknowledged(t *testing.T) {
	o := newOutcomes()
	o.failed["d1"] = op{"a", 5}
	v := check(o, map[string]*AuditResult{"a": {Balance: 0, Applied: map[string]int64{}}}, "")
	require.False(t, v.ok())
	require.Contains(t, strings.Join(v.problems, "\n"), "nothing was checked")
}

// In --join mode the check covers the requests whose ID starts with this
// process's prefix. The prefix the check used ("<member>-c") stopped
// matching when request IDs gained the run's seed: no ledger entry was
// this process's, a failed request found applied was not counted, and the
// sum of its ledger entries read 0.
func TestJoinCheckCoversOwnRequests(t *testing.T) {
	const me, other = "127.0.0.1:4000", "127.0.0.1:4001"
	own := requestPrefix(me, 7)
	mine := func(seq int) string { return fmt.Sprintf("%s-%d", callerName(me, 7, 1), seq) }
	o := newOutcomes()
	o.acked[mine(1)] = op{"a", 50}
	o.failed[mine(2)] = op{"a", 3} // failed, but applied
	theirs := fmt.Sprintf("%s-%d", callerName(other, 9, 0), 1)
	ledgers := map[string]*AuditResult{"a": {Balance: 60, Applied: map[string]int64{mine(1): 50, mine(2): 3, theirs: 7}}}
	v := check(o, ledgers, own)
	require.True(t, v.ok(), v.problems)
	require.Equal(t, int64(53), v.ownLedger)
	require.Equal(t, 1, v.failedAppliedN)

	// An entry with this process's prefix that none of its callers sent.
	ledgers["a"].Applied[mine(3)] = 1
	ledgers["a"].Balance++
	v = check(o, ledgers, own)
	require.False(t, v.ok())
	require.Contains(t, strings.Join(v.problems, "\n"), "no caller sent")
}
