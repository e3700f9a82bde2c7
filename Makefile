GO      ?= go
BIN     := $(CURDIR)/bin
export PATH := $(BIN):$(PATH)

.PHONY: all test run bench bench-quick lint fuzz tidy consul

all: test

## test: vet and run every test with the race detector
test:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

## run: the demo
run:
	$(GO) run ./examples/demo

## bench: the side-by-side benchmark suite (see docs/benchmarks.md)
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./scheduler/... ./mailbox/... ./actor/...

## lint: formatting, vet and module hygiene
lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...
	$(GO) mod tidy -diff
