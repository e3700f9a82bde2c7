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
