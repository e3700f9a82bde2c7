#!/usr/bin/env bash
# Side-by-side benchmark suite: fraktor-go, protoactor-go and raw Go, in one
# run on this machine (see docs/benchmarks.md).
#
#   bash scripts/bench.sh                 # 6 rounds, -benchtime 500ms (≈ 6 min on 2 cores)
#   BENCH_QUICK=1 bash scripts/bench.sh   # 3 rounds, -benchtime 100ms, SkyNet depth 5 (≈ 1 min)
#
# Optional: BENCH=regexp (which benchmarks), BENCH_COUNT (rounds), BENCH_TIME,
# BENCH_CPU (GOMAXPROCS for the run, default 2 for both frameworks).
# Raw output goes to benchmarks/results/latest.txt (gitignored); benchstat
# tables and the summary table go to standard output.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
go=${GO:-go}

# benchstat from golang.org/x/perf; this version's go.mod asks for go 1.26.0.
benchstat_version=v0.0.0-20260908200009-22c9c6c9d4da
benchstat=$root/bin/benchstat
if [[ ! -x $benchstat ]]; then
	echo "installing benchstat $benchstat_version into bin/" >&2
	GOBIN=$root/bin "$go" install "golang.org/x/perf/cmd/benchstat@$benchstat_version"
fi

if [[ -n ${BENCH_QUICK:-} ]]; then
	count=3 benchtime=100ms
else
	count=6 benchtime=500ms
fi
count=${BENCH_COUNT:-$count}
benchtime=${BENCH_TIME:-$benchtime}
cpu=${BENCH_CPU:-2}
pattern=${BENCH:-.}

out=benchmarks/results/latest.txt
mkdir -p "$(dirname "$out")"
pkgs=(. remote cluster)
# Rounds interleave the implementations: go test's -count repeats each
# sub-benchmark back to back (fraktor-go six times, then protoactor-go six
# times), so a load that changes during the run would favour one side.
# Each round runs every package's test binary once (-test.count 1), and
# within a round a workload's implementations run one after another.
args=(-test.run '^$' -test.bench "$pattern" -test.benchmem -test.count 1 -test.benchtime "$benchtime" -test.cpu "$cpu" -test.timeout 30m)

{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine: nproc=$(nproc), cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $("$go" version | cut -d' ' -f3-)"
	env_set=
	for v in BENCH_QUICK BENCH BENCH_COUNT BENCH_TIME BENCH_CPU; do
		if [[ -n ${!v:-} ]]; then
			env_set+="$v=$(printf '%q' "${!v}") "
		fi
	done
	echo "command: ${env_set}bash scripts/bench.sh, which builds each package's test binary (go test -c in benchmarks/{.,remote,cluster}) and runs, $count rounds, each binary in its package's directory with: $(printf '%q ' "${args[@]}" | sed 's/ $//')"
} | tee "$out.header" >&2

bindir=$(mktemp -d)
trap 'rm -rf "$bindir"' EXIT
for p in "${pkgs[@]}"; do
	(cd "benchmarks/$p" && "$go" test -c -o "$bindir/bench-${p/./root}.test" .)
done

start=$(date +%s)
: >"$out"
# Raw lines stream to stderr as they come, so a long run shows progress.
for ((round = 1; round <= count; round++)); do
	echo "round $round of $count" >&2
	for p in "${pkgs[@]}"; do
		(cd "benchmarks/$p" && BENCH_QUICK=${BENCH_QUICK:-} "$bindir/bench-${p/./root}.test" "${args[@]}") | tee -a "$out" >&2
	done
done
echo "suite took $(($(date +%s) - start)) s" >&2

echo
echo "## benchstat (time, round-trip percentiles, bytes per idle actor, allocations)"
echo
"$benchstat" -col /impl -filter '.unit:(sec/op OR p50-ns OR p99-ns OR B/actor OR B/grain OR req/s OR allocs/op)' "$out"
echo
echo "## summary"
echo
cat "$out.header"
echo
(cd benchmarks && "$go" run ./cmd/summarize "results/latest.txt")
