// Command remote runs two actor systems in one process that talk over
// loopback TCP (ports chosen by the OS): a remote spawn by kind, a ping-pong
// with a JSON-registered message, a remote watch, and what a watcher hears
// when the other node goes away.
//
//	go run ./examples/remote
package main
