// Package keywords holds a schema whose names are Go keywords or predeclared identifiers, and a
// service with no methods, for the generator's tests (generated code).
package keywords
