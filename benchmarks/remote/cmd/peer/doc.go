// Command peer is the remote benchmark's peer as a program: it hosts the
// sink and echo actors of fraktor-go or protoactor-go, prints
// "remotebench-peer ADDRESS SINK-ID ECHO-ID" once listening, and exits when
// its standard input closes.
//
//	go run ./remote/cmd/peer fraktor|protoactor|raw-tcp|raw-proto
package main
