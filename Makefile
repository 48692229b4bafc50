# pipegen: make demo runs the example end to end, make test runs every test.
GO ?= go
BIN := bin

.PHONY: all demo test test-short bench bench-quick bench-nexmark bench-wordcount bench-state golden vet tidy fmt clean crash-test invariants

all: $(BIN)/pipegen

# On a fresh machine the go command compiles pipegen's dependencies
# first, two minutes on two cores, and says nothing meanwhile.
$(BIN)/pipegen: FORCE
	@echo '==> building pipegen (a first build compiles its dependencies: about 2 minutes on two cores)'
	$(GO) build -o $(BIN)/pipegen ./cmd/pipegen

# Build pipegen, compile the word count example, run it on a generated
# corpus and check its output against an independent count.
demo: $(BIN)/pipegen
	$(BIN)/pipegen build -o $(BIN)/wordcount examples/wordcount/pipeline.yaml
	$(GO) run ./examples/wordcount/demo -program $(BIN)/wordcount -work $(BIN)/demo

# Every test, vet, gofmt, and tidy go.mod files (this module's and
# examples/annotated's, a module of its own); what CI runs. The tests link
# many programs (the examples' generated pipelines, about 70 test
# binaries; golden's and Nexmark's programs are linked into one binary
# each, internal/multicall, and the crash tests link each of their
# programs once, compile.ReuseBuilds); without the symbol table and DWARF
# (-ldflags=-s, which implies -w) a link takes half the time, and no test
# reads them (a panic's stack trace does not need them). Nor does the
# compiler make the DWARF that such a link would drop
# (-gcflags=all=-dwarf=false): compiling the package of golden/eventtime's
# program on the pebble backend took 7.9-8.7 CPU-s instead of 10.4-10.6
# (3 runs each, taken in turn, of `go list -export` of that program
# generated into a package of this module, a comment line added to it
# before each run, with GOFLAGS as below, with and without the flag;
# after a change to the runtime, compiles are half of make test's CPU).
# TAGS are the ones pipegen build passes (compile/build.go, staticTags):
# test binaries, vet and built pipelines then share the compiled packages
# that import net, instead of each compiling their own. vet takes the same
# compiler flags, so that the tests find the packages it compiled.
TAGS := netgo,osusergo
BUILDFLAGS := -tags=$(TAGS) -gcflags=all=-dwarf=false

# The packages go test runs: all but golden's want/ programs without tests
# of their own. go test would compile each as the main package it is,
# and golden's test compiles them again, into its one binary; vet checks
# them as they are. After a change to the runtime, which every program
# imports, that spares 25 compiles: the test binaries built in 67-71 s
# instead of 93-110 (2 cores).
LISTPKGS = $(GO) list -f '{{.ImportPath}} {{len .TestGoFiles}}{{len .XTestGoFiles}}' ./...
NOTWANT = awk '!($$1 ~ /\/golden\/[^\/]+\/want$$/ && $$2 == "00") { print $$1 }'

test: vet tidy
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo 'gofmt needed'; exit 1; }
	@list=$$($(LISTPKGS)) && pkgs=$$(echo "$$list" | $(NOTWANT)) && [ -n "$$pkgs" ] || { echo 'go list ./... failed'; exit 1; }; \
		echo 'go test -count=1 -timeout 20m ./... (but golden/*/want without tests)'; \
		GOFLAGS="$(GOFLAGS) -ldflags=-s $(BUILDFLAGS)" $(GO) test -count=1 -timeout 20m $$pkgs

test-short:
	$(GO) test -short ./...

# With the tests' tags and compiler flags, so that the packages vet
# compiles (those that import net above all) are the ones the tests then
# find in the build cache: with an empty cache, as in CI, that spares
# compiling them twice (207 s against 238 for vet and the tests' compile,
# on 2 cores). The runtime and pipegen are vetted for macOS too (without
# cgo, as a cross-compile builds), where users build their pipelines:
# a call that only Linux's syscall package has broke every pipeline's
# build there (runtime/internal/storage called syscall.Madvise until
# 2026-12-07). Its packages for darwin share nothing with Linux's: with
# an empty build cache this takes 2m14s on 2 cores (the standard library
# too), once; then about a second, a few after a change to the runtime.
vet:
	GOFLAGS="$(GOFLAGS) $(BUILDFLAGS)" $(GO) vet ./...
	GOOS=darwin CGO_ENABLED=0 $(GO) vet ./runtime/... ./cmd/...

# go mod tidy would change nothing: every requirement is needed and marked
# direct or indirect as it is.
tidy:
	@$(GO) mod tidy -diff || { echo 'go.mod is not tidy: run go mod tidy'; exit 1; }
	@cd examples/annotated && $(GO) mod tidy -diff || { echo 'examples/annotated/go.mod is not tidy: run go mod tidy there'; exit 1; }

# Kill the running-count example 20 times at random moments and check that
# its committed output equals a clean run's (make test runs a shorter
# version); SEED=N replays the kill moments of a failure.
crash-test: $(BIN)/pipegen
	$(BIN)/pipegen verify -kills 20 $(if $(SEED),-seed $(SEED)) -set sources.events.rate=50000 examples/runningcount/pipeline.yaml

# The benchmarks: Nexmark (examples/nexmark: one table, also written to
# bench/results/nexmark.json and nexmark.png), then the word count's
# (8 to 10 minutes in all on 2 cores, most of it Nexmark); the state
# table is bench-state.
bench: bench-nexmark bench-wordcount

# Nexmark on fewer events, each program run once: within a minute.
bench-quick:
	$(GO) run ./examples/nexmark/bench -events 1000000 -checkpoint-events 0 -jsonl-events 500000 -jsonl-checkpoint-events 0 -reps 1 -out $(BIN)/bench-quick

bench-nexmark:
	$(GO) run ./examples/nexmark/bench -out bench/results

# Benchmarks of the word count: its ratio to a hand-written Go loop
# (gen/hand), to mode none with checkpoints every second (ckpt/none), and
# without --http to with it, scraped every 100ms (http/plain); and of
# Kafka -> map -> Kafka through kfake, exactly-once to at-least-once; and
# of Kafka partitions kept within a drift of each other (max-drift) against
# not, in memory, CPU and wall time (BenchmarkKafkaAlignment). About a
# minute and a half.
bench-wordcount:
	$(GO) test -run '^$$' -bench . -benchtime 5x ./examples/wordcount
	$(GO) test -run '^$$' -bench Kafka -benchtime 3x ./internal/e2e/kafka

# The state table of both state backends (examples/statebench): keyed
# state of 10K, 1M and 10M keys, tens of minutes; not part of make bench,
# which stays within 10 minutes.
bench-state:
	$(GO) test -run '^$$' -bench State -benchtime 1x -timeout 120m ./examples/statebench

# The runtime's tests and every example's and crash test's pipelines
# with the runtime's self-checks on (the build tag invariants; see
# runtime/internal/invariants): a timer service's records, heaps, counts
# and list of changes at each advance and snapshot, a keyed state's
# lists, index, entries handed back and lists of changes at each
# capture, the pebble backend's cache and its list of changed values at
# each barrier and spill, the panes of tumbling and sliding windows and
# the sessions at each capture or snapshot, an exchange's barrier
# alignment at each control event. Not part of make test: it compiles
# the runtime and the pipelines again under the tag (on 2 cores 3
# minutes with them in the build cache, 4.5 after a change to the
# runtime, 9 for the first run beside another test run); CI runs it
# after make test.
invariants:
	GOFLAGS="$(GOFLAGS) -ldflags=-s -tags=invariants,$(TAGS) -gcflags=all=-dwarf=false" $(GO) test -count=1 -timeout 30m ./runtime/... ./examples/... ./internal/crashtest/... ./internal/e2e/...

# The Kafka crash test with 20 kills over a million events, for 10 seeds
# (make test kills it 5 times over 200000, once).
.PHONY: kafka-soak
kafka-soak:
	@for s in 1 2 3 4 5 6 7 8 9 10; do \
		echo "PIPEGEN_CRASH_SEED=$$s PIPEGEN_CRASH_KILLS=20 PIPEGEN_CRASH_EVENTS=1000000"; \
		PIPEGEN_CRASH_SEED=$$s PIPEGEN_CRASH_KILLS=20 PIPEGEN_CRASH_EVENTS=1000000 $(GO) test -count=1 -v -run 'TestCrash' ./examples/kafka | grep -E 'clean run|^(ok|FAIL|---)' || exit 1; \
	done

# Rewrite every golden file from the current compiler, and the generated
# code of examples/annotated (a module of its own); review the diff.
# golden/ first, alone: its test rewrites the want/ packages, which a go
# test of ./... has already planned to build from the files as they were
# (a generated import added then failed their build). examples/annotated
# before ./..., whose examples test fails when it is stale.
golden:
	$(GO) test ./golden -update
	cd examples/annotated && $(GO) generate ./...
	$(GO) test ./... -update

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf $(BIN)

FORCE:

# Fuzz every Fuzz target (the decoders of checkpointed state), FUZZTIME
# each. Not part of make test, whose go test runs only their seed corpora.
# Go 1.26's fuzzer can fail at the end of -fuzztime with "context deadline
# exceeded" and no input found (a race in its coordinator,
# go.dev/issue/75804, fixed in Go 1.27): targets of golden/state-types
# did so in two CI runs of two, and in a local run. Such a failure, and
# only such, is run again, up to twice more; a failure that wrote an
# input to testdata/fuzz, or any other, stops make fuzz at once.
FUZZTIME ?= 10s
.PHONY: fuzz
fuzz:
	@log=$$(mktemp); trap 'rm -f $$log $$log.rc' EXIT; \
	for dir in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
		for f in $$(grep -h '^func Fuzz' $$dir/*_test.go | sed 's/^func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
			for try in 1 2 3; do \
				echo "$(GO) test $$dir -run '^$$' -fuzz '^$$f$$' -fuzztime $(FUZZTIME)"; \
				{ $(GO) test $$dir -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME); echo $$? >$$log.rc; } 2>&1 | tee $$log; \
				[ "$$(cat $$log.rc)" = 0 ] && break; \
				if grep -q 'Failing input written' $$log || ! grep -q 'context deadline exceeded' $$log || [ $$try = 3 ]; then exit 1; fi; \
				echo "$$f failed at the end of its fuzztime with nothing found (Go's race, go.dev/issue/75804): running it again"; \
			done; \
		done; \
	done
