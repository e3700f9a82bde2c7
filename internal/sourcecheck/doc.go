// Package sourcecheck holds tests over the repository's own source: checks
// that go vet does not make and that a review can miss.
package sourcecheck
