// Package shopv1 holds the account and audit services the typed grain tests run (generated
// by protoc-gen-go and protoc-gen-fraktor-grain).
package shopv1
