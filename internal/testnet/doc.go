// Package testnet holds network helpers for the project's tests: an
// address that stays unreachable for the whole test.
package testnet
