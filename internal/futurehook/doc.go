// Package futurehook lets package cluster make request futures of package
// actor that report their completion, without an exported API in actor:
// actor sets the functions when it is initialised, cluster calls them. A
// grain call whose grain's PID is known completes its caller's future from
// the completion of the request to the grain, with no goroutine of its own
// (cluster/warm_call.go).
package futurehook
