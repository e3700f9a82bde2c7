module github.com/fraktor-go/fraktor

go 1.25.0

require github.com/cespare/xxhash/v2 v2.3.0
