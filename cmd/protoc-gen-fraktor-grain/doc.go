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
// Option package_suffix (--fraktor-grain_opt=package_suffix=grain) puts
// the grain code of Go package p into Go package p+suffix, in a directory
// of that name below p's files, which imports p for the messages: beside
// the gRPC code of the same services, which protoc-gen-go-grpc writes into
// p with the names XxxClient and NewXxxClient that the grain client has
// too. protogen's options (paths, module, M) work as for protoc-gen-go;
// any other option is refused.
//
// It refuses, with an error naming the service and method: streaming
// methods (a grain method takes one request and returns one reply), two
// methods of one service taking the same request message (a grain
// dispatches on the request's type), a method named like another's
// Future variant (Deposit and DepositFuture), two methods with the same Go
// name (get_balance and GetBalance), a method named like a standard method
// go vet checks (MarshalJSON, ReadByte, ...), and a service whose generated
// names would clash with another name of its Go package (a message
// AccountClient beside a service Account), and a generated file named like
// protoc-gen-go's file of another .proto (x.proto's x_fraktor.pb.go and
// x_fraktor.proto's).
package main
