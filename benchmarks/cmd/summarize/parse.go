package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// results holds every measured value by workload, implementation and unit,
// and the workloads in the order they first appeared.
type results struct {
	values map[key][]float64
	order  []string
	impls  map[string][]string // workload -> implementations seen, in order
}

type key struct{ workload, impl, unit string }

// errSyntax reports a benchmark line that cannot be read.
var errSyntax = errors.New("summarize: malformed benchmark line")

// parse reads go test -bench output. Lines that are not results (headers,
// PASS, logs) are skipped; a result line whose name has no impl= element
// is skipped too, as it does not belong to the side-by-side suite.
func parse(r io.Reader) (*results, error) {
	res := &results{values: map[key][]float64{}, impls: map[string][]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue // a name line followed by log output, not a result
		}
		workload, impl, ok := splitName(f[0])
		if !ok {
			continue
		}
		if (len(f)-2)%2 != 0 {
			return nil, fmt.Errorf("%w %d: %q", errSyntax, line, sc.Text())
		}
		if _, seen := res.impls[workload]; !seen {
			res.order = append(res.order, workload)
		}
		if !slices.Contains(res.impls[workload], impl) {
			res.impls[workload] = append(res.impls[workload], impl)
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%w %d: value %q: %w", errSyntax, line, f[i], err)
			}
			k := key{workload, impl, f[i+1]}
			res.values[k] = append(res.values[k], v)
		}
	}
	return res, sc.Err()
}

// splitName turns "BenchmarkTell/impl=fraktor-2" into ("Tell", "fraktor").
func splitName(name string) (workload, impl string, ok bool) {
	name = strings.TrimPrefix(name, "Benchmark")
	parts := strings.Split(name, "/")
	for i, p := range parts {
		v, found := strings.CutPrefix(p, "impl=")
		if !found {
			continue
		}
		if i == len(parts)-1 {
			v = trimProcs(v)
		}
		rest := slices.Delete(slices.Clone(parts), i, i+1)
		return strings.Join(rest, "/"), v, v != ""
	}
	return "", "", false
}

// trimProcs removes the -GOMAXPROCS suffix go test appends to the last
// element of a benchmark name.
func trimProcs(s string) string {
	i := strings.LastIndexByte(s, '-')
	if i < 0 {
		return s
	}
	if _, err := strconv.Atoi(s[i+1:]); err != nil {
		return s
	}
	return s[:i]
}

// median returns the median of vs, or false when vs is empty.
func median(vs []float64) (float64, bool) {
	if len(vs) == 0 {
		return 0, false
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2], true
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2, true
}
