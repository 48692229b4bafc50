# pipegen: make demo runs the example end to end, make test runs every test.
GO ?= go
BIN := bin

.PHONY: all demo test test-short bench golden vet fmt clean

all: $(BIN)/pipegen

$(BIN)/pipegen: FORCE
	$(GO) build -o $(BIN)/pipegen ./cmd/pipegen

# Build pipegen, compile the word count example, run it on a generated
# corpus and check its output against an independent count.
demo: $(BIN)/pipegen
	$(BIN)/pipegen build -o $(BIN)/wordcount examples/wordcount/pipeline.yaml
	$(GO) run ./examples/wordcount/demo -program $(BIN)/wordcount -work $(BIN)/demo

# Every test, vet and gofmt; what CI runs.
test: vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go' | grep -v '^golden/.*/want/'))" || { gofmt -l $$(git ls-files '*.go' | grep -v '^golden/.*/want/'); echo 'gofmt needed'; exit 1; }
	$(GO) test -count=1 -timeout 20m ./...

test-short:
	$(GO) test -short ./...

vet:
	$(GO) vet ./...

# Benchmarks; each reports its ratio to a hand-written Go loop.
bench:
	$(GO) test -run '^$$' -bench . -benchtime 5x ./examples/wordcount

# Rewrite every golden file from the current compiler; review the diff.
golden:
	$(GO) test ./... -update

fmt:
	gofmt -w $$(git ls-files '*.go' | grep -v '^golden/.*/want/')

clean:
	rm -rf $(BIN)

FORCE:
