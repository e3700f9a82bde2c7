GO       ?= go
BIN      := $(CURDIR)/bin
FUZZTIME ?= 150000x
export PATH := $(BIN):$(PATH)

# Fuzz targets: package:FuzzName, each run for FUZZTIME by `make fuzz` (CI too).
# FUZZTIME is an execution count (Nx), not a duration: Go 1.26's fuzz
# coordinator can fail a target with a bare "context deadline exceeded" when a
# duration runs out while a worker is mid-call (golang/go#75804, fixed in Go
# 1.27); a count has no deadline to race. 150000x is about 10 s per target
# here. `make fuzz FUZZTIME=60s` still works for a longer local run.
FUZZ_TARGETS := ./cluster:FuzzParseIdentity ./cluster:FuzzClusterWire ./cluster/consul:FuzzDecodeRecord ./remote:FuzzDecodeFrame ./remote:FuzzHandshake ./remote:FuzzSystemMessage ./remote:FuzzDeliverInbound ./remote:FuzzProtoDecode
# What `make test` needs installed first: a Consul agent for the Consul
# provider's tests, Chromium for the dashboard's browser test.
TEST_DEPS := consul chromium protoc

.PHONY: all test run bench bench-quick lint fuzz consul chromium protoc check-bench chaos generate check-generate

all: test

## test: vet and every test with the race detector (builds Consul and installs Chromium first when missing)
test: $(TEST_DEPS)
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 20m ./...

## run: the cluster demo (examples/cluster): 3 members, load, a member killed midway, a consistency check; dashboard on localhost:8080
run:
	$(GO) run ./examples/cluster

## bench: the side-by-side benchmark suite against protoactor-go (docs/benchmarks.md)
bench:
	bash scripts/bench.sh

## bench-quick: the same in under two minutes, fewer samples
bench-quick:
	BENCH_QUICK=1 bash scripts/bench.sh

## check-bench: run every workload of benchmarks/ once at a tiny size and check the counts
check-bench:
	cd benchmarks && $(GO) vet ./... && $(GO) test -race -count=1 ./...

## fuzz: each fuzz target of the network decoders for FUZZTIME
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$pkg $$name ($(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	done

## chaos: a random chaos campaign of the grain testkit (CHAOS_SEEDS random
## seeds of CHAOS_STEPS fault steps each) with a summary per seed;
## CHAOS_BEYONDP=true pauses members beyond P too (fencing tokens must then
## refuse the stale writes); CHAOS_REACH=true turns the reachability vote on;
## replay a failing seed with the command it prints
CHAOS_STEPS ?= 10000
CHAOS_SEEDS ?= 1
CHAOS_BEYONDP ?= false
CHAOS_REACH ?= false
chaos:
	$(GO) test -race -count=1 -timeout 0 -run '^TestChaos$$' -v ./testkit/ \
		-chaos.random=$(CHAOS_SEEDS) -chaos.steps=$(CHAOS_STEPS) -chaos.beyondp=$(CHAOS_BEYONDP) -chaos.reach=$(CHAOS_REACH)

## consul: build bin/consul (v1.14.11) when it is missing
consul:
	bash tools/consul/install.sh $(BIN)/consul

## chromium: install Chromium with apt-get when no Chromium or Chrome is on PATH
chromium:
	bash tools/chromium/install.sh

## protoc: install protoc (Debian protobuf-compiler) with apt-get when it is missing
protoc:
	bash tools/protoc/install.sh

# Every .proto of the repository but tools/ (benchmarks/ is its own module; its
# generated code imports this one through a replace).
PROTOS = $(shell find . -name '*.proto' -not -path './tools/*' -not -path './.git/*' | sed 's|^\./||' | sort)

## generate: regenerate the Go code of every .proto with protoc, protoc-gen-go (bin/) and protoc-gen-fraktor-grain
generate: protoc
	$(GO) build -o $(BIN)/protoc-gen-go google.golang.org/protobuf/cmd/protoc-gen-go
	$(GO) build -o $(BIN)/protoc-gen-fraktor-grain ./cmd/protoc-gen-fraktor-grain
	protoc -I . --go_out=. --go_opt=paths=source_relative \
		--fraktor-grain_out=. --fraktor-grain_opt=paths=source_relative $(PROTOS)

## check-generate: fail when a generated file differs from what `make generate` writes
check-generate: generate
	@git diff --exit-code -- $$(git ls-files '*.pb.go') || (echo "generated files are out of date: run make generate" >&2; exit 1)
	@test -z "$$(git ls-files --others --exclude-standard -- '*.pb.go')" || (git ls-files --others --exclude-standard -- '*.pb.go'; echo "untracked generated files: run make generate and add them" >&2; exit 1)

## lint: formatting, vet and module hygiene
lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...
	$(GO) mod tidy -diff
	cd benchmarks && $(GO) mod tidy -diff
