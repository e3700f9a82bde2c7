#!/usr/bin/env bash
# Side-by-side benchmark suite: fraktor-go, protoactor-go and raw Go, in one
# run on this machine (see docs/benchmarks.md).
#
#   bash scripts/bench.sh                 # -count 6, -benchtime 500ms (≈ 6 min on 2 cores)
#   BENCH_QUICK=1 bash scripts/bench.sh   # -count 3, -benchtime 100ms, SkyNet depth 5 (≈ 1 min)
#
# Optional: BENCH=regexp (which benchmarks), BENCH_COUNT, BENCH_TIME,
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
cmd=(go test -run '^$' -bench "$pattern" -benchmem -count "$count" -benchtime "$benchtime" -cpu "$cpu" -timeout 30m . ./remote/ ./cluster/)

{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine: nproc=$(nproc), cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $("$go" version | cut -d' ' -f3-)"
	echo "command: ${BENCH_QUICK:+BENCH_QUICK=1 }bash scripts/bench.sh, which runs: (cd benchmarks && $(printf '%q ' "${cmd[@]}" | sed 's/ $//'))"
} | tee "$out.header" >&2

start=$(date +%s)
# Raw lines stream to stderr as they come, so a long run shows progress.
(cd benchmarks && BENCH_QUICK=${BENCH_QUICK:-} "$go" "${cmd[@]:1}") | tee "$out" >&2
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
