// Command protoc-gen-fraktor-grain is a protoc plugin that generates typed
// grains from the services of .proto files: for each service a server
// interface (AccountGrain), a kind constructor (AccountKind) and a client
// (NewAccountClient), in a <file>_fraktor.pb.go beside protoc-gen-go's
// <file>.pb.go, for the cluster package's runtime. docs/typed-grains.md
// describes the generated code.
//
//	protoc --go_out=. --go_opt=paths=source_relative \
//	  --fraktor-grain_out=. --fraktor-grain_opt=paths=source_relative shop.proto
//
// It refuses, with an error naming the service and method: streaming
// methods (a grain method takes one request and returns one reply), two
// methods of one service taking the same request message (a grain
// dispatches on the request's type), a method named like another's
// Future variant (Deposit and DepositFuture), two methods with the same Go
// name (get_balance and GetBalance), a method named like a standard method
// go vet checks (MarshalJSON, ReadByte, ...), and a service whose generated
// names would clash with another name of its Go package (a message
// AccountClient beside a service Account).
package main
