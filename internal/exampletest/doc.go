// Package exampletest runs an example program's main in a child process of
// the program's own test binary, so a test checks what the program prints
// and its exit code, as a user running it would see them.
//
// The example's test package calls Main from its TestMain; a test calls Run.
package exampletest
