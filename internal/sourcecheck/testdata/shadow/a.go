// Package shadow is TestBuiltinPrintsResolvesNames's fixture: two calls of
// the builtins (lines 23 and 24) among calls of names that shadow them.
package shadow

import "fmt"

func params(println func(...any)) {
	println("a parameter")
}

func locals() {
	print := fmt.Print
	print("a local variable")
}

func others() {
	print("the package's function of b.go")
	println := 1
	_ = println
}

func builtins() {
	println("the builtin")
	(println)("the builtin in parentheses")
}
