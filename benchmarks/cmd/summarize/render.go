package main

import (
	"fmt"
	"io"
	"strings"
)

// The implementation names the benchmarks use.
const (
	implFraktor = "fraktor"
	implProto   = "protoactor"
	rawPrefix   = "raw-"
)

// targets are the targets for fraktor-go on this machine kind, in
// ns per op.
var targets = map[string]float64{
	"Tell":          50,
	"PingPong":      750,
	"Request":       2000,
	"SpawnStop":     1000,
	"SpawnStopSync": 1000,
}

// row is one line of the table: a workload and the unit its figures are in.
type row struct {
	label, workload, unit string
	lowerIsBetter         bool
}

// rows lists, per workload, the figures worth a line: time per op, plus the
// round-trip percentiles where reported, plus bytes per idle actor.
func rows(res *results) []row {
	var out []row
	for _, w := range res.order {
		if w == "IdleActor" {
			out = append(out, row{"IdleActor (bytes per idle actor)", w, "B/actor", true})
			continue
		}
		out = append(out, row{w, w, "ns/op", true})
		for _, p := range []string{"p50", "p99"} {
			if hasUnit(res, w, p+"-ns") {
				out = append(out, row{w + " " + p, w, p + "-ns", true})
			}
		}
	}
	return out
}

// hasUnit reports whether any implementation of workload w reported unit
// (the round-trip workloads report p50-ns and p99-ns).
func hasUnit(res *results, w, unit string) bool {
	for _, im := range res.impls[w] {
		if len(res.values[key{w, im, unit}]) > 0 {
			return true
		}
	}
	return false
}

// render writes the summary table as Markdown.
func render(w io.Writer, res *results) {
	fmt.Fprintln(w, "| workload | fraktor-go | protoactor-go | raw limit | fraktor/peer | fraktor/raw | target |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | --- |")
	for _, r := range rows(res) {
		f, fok := median(res.values[key{r.workload, implFraktor, r.unit}])
		p, pok := median(res.values[key{r.workload, implProto, r.unit}])
		raw, rawName, rok := fastestRaw(res, r)
		cells := []string{r.label, cell(f, fok, r.unit), cell(p, pok, r.unit), "—", ratio(f, fok, p, pok), ratio(f, fok, raw, rok), targetCell(r, f, fok)}
		if rok {
			cells[3] = fmt.Sprintf("%s (%s)", format(raw, r.unit), strings.TrimPrefix(rawName, rawPrefix))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Medians over the runs. Ratios below 1 mean fraktor-go takes less time (or memory) than the other side.")
}

// fastestRaw returns the lowest median among the raw-* implementations of
// r's workload (the machine's limit) and which one it was.
func fastestRaw(res *results, r row) (float64, string, bool) {
	best, name, found := 0.0, "", false
	for _, im := range res.impls[r.workload] {
		if !strings.HasPrefix(im, rawPrefix) {
			continue
		}
		v, ok := median(res.values[key{r.workload, im, r.unit}])
		if ok && (!found || v < best) {
			best, name, found = v, im, true
		}
	}
	return best, name, found
}

func cell(v float64, ok bool, unit string) string {
	if !ok {
		return "—"
	}
	return format(v, unit)
}

func ratio(a float64, aok bool, b float64, bok bool) string {
	if !aok || !bok || b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func targetCell(r row, v float64, ok bool) string {
	t, has := targets[r.workload]
	if !has || r.unit != "ns/op" {
		return ""
	}
	mark := "not met"
	if ok && v <= t {
		mark = "met"
	}
	return fmt.Sprintf("≤ %s: %s", format(t, "ns/op"), mark)
}

// format prints a value in its unit, scaling nanoseconds to µs, ms or s.
func format(v float64, unit string) string {
	switch unit {
	case "ns/op", "p50-ns", "p99-ns":
		switch {
		case v >= 1e9:
			return fmt.Sprintf("%.2f s", v/1e9)
		case v >= 1e6:
			return fmt.Sprintf("%.2f ms", v/1e6)
		case v >= 1e3:
			return fmt.Sprintf("%.2f µs", v/1e3)
		default:
			return fmt.Sprintf("%.1f ns", v)
		}
	case "B/actor":
		return fmt.Sprintf("%.0f B", v)
	}
	return fmt.Sprintf("%.3g %s", v, unit)
}
