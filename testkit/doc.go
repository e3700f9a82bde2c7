// Package testkit tests actors and grains: a system per test that shuts
// down and checks for leaked goroutines at cleanup, probes that record what
// they receive, expectations with clear failures, and a deterministic mode
// in which the test steps the scheduler and moves a virtual clock.
package testkit
