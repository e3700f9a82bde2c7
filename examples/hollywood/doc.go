// Command hollywood holds three small Hollywood (github.com/anthdm/hollywood)
// programs ported to fraktor-go, the ones docs/coming-from-hollywood.md
// walks through:
//
//	go run ./examples/hollywood local    # supervised restarts, requests, the event stream, middleware
//	go run ./examples/hollywood remote   # two OS processes over loopback TCP
//	go run ./examples/hollywood cluster  # three members, grains in place of cluster.Activate
//
// Without an argument it runs the three in turn. "remote" starts this same
// binary again as its peer ("remote-server").
package main
