// Command summarize reads `go test -bench` output of the benchmarks module
// (several -count runs of sub-benchmarks named impl=NAME) and prints one
// Markdown table: per workload the median of fraktor-go, of protoactor-go
// and of the fastest raw-Go baseline, and the ratios fraktor/peer and
// fraktor/raw, with the target where the project set one.
//
// Usage: summarize [file]   (standard input when no file is given)
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	in := io.Reader(os.Stdin)
	if len(os.Args) > 1 {
		f, err := os.Open(os.Args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, "summarize:", err)
			os.Exit(1)
		}
		defer f.Close()
		in = f
	}
	res, err := parse(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "summarize:", err)
		os.Exit(1)
	}
	if len(res.order) == 0 {
		fmt.Fprintln(os.Stderr, "summarize: no benchmark results in the input")
		os.Exit(1)
	}
	render(os.Stdout, res)
}
