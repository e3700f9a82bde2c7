// Package typedschema is a team's existing multi-file protobuf schema
// served as typed grains: two proto packages (acme.common.v1 and
// acme.orders.v1, which takes the other's messages as requests and
// replies), a proto2 file (acme.legacy), a package whose Go name is a
// keyword (acme.type, Go package type_), well-known types, and names that
// a generator can get wrong (snake_case and lower-case services and
// methods, methods named Send, Kind, Init, Receive, Stop, Client,
// Identity, Context and Error, a message named like another package's
// generated client). The generated code under it is checked in
// (make generate); the tests of this package run the grains in a
// 2-member cluster over loopback TCP and in the grain testkit
// (docs/typed-grains.md, "Serving an existing schema").
package typedschema
