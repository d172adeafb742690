# The two commands: `make run` (demo) and `make test` (everything). Zig, AWS-LC's, nghttp2's and
# zlib's source are fetched on first use by tools/bootstrap.sh into .zig/ (pinned 0.17.1 from
# PyPI), .aws-lc/, .nghttp2/ and .zlib/ (the pinned aws-lc-sys, libnghttp2-sys and libz-sys
# crates from crates.io);
# build.zig compiles each library once, then zig's cache keeps it.
ZIG := $(shell tools/bootstrap.sh)
PYTHON ?= python3
FUZZ_ITERATIONS ?= 1000000
SIM_SEEDS ?= 3000
JS_FUZZ_ITERATIONS ?= 100000

.PHONY: all build run test unit fuzz sim integration js bench fmt release clean

all: build

build:
	$(ZIG) build -Doptimize=ReleaseSafe

run: build
	./zig-out/bin/sluice demo

test: unit fuzz sim integration js

unit:
	tools/check_test_entry.sh
	tools/check_layers.sh
	$(ZIG) build test
	$(ZIG) build fmt-check

fuzz:
	$(ZIG) build fuzz -- --iterations $(FUZZ_ITERATIONS)
	$(ZIG) build dns-fuzz -- --iterations $(FUZZ_ITERATIONS)

# The data-plane simulator (docs/ARCHITECTURE.md, "The simulator"): seeds from a random start,
# printed; a failure prints its seed and the command that replays it.
sim:
	$(ZIG) build sim -- --seeds $(SIM_SEEDS)

# The 15 slowest tests are listed after the run: CI's whole `make test` must stay near 20 minutes.
integration: build
	$(PYTHON) -m pytest test/integration -q --durations=15

# The JavaScript engine's tests: corpus and generated programs against node, refusals,
# test262's parser files, then a seeded fuzz run of its compiler, verifier and interpreter
# (docs/JS.md).
js: build
	$(PYTHON) -m pytest test/js -q
	$(ZIG) build js-fuzz -- --iterations $(JS_FUZZ_ITERATIONS)

bench:
	$(ZIG) build bench
	bench/proxy.sh

.PHONY: bench-chaos
bench-chaos:
	bench/chaos.sh

.PHONY: bench-coldstart
bench-coldstart:
	bench/coldstart.sh

.PHONY: bench-memory
bench-memory:
	bench/memory.sh

.PHONY: bench-js
bench-js:
	bench/js.sh

.PHONY: bench-tls
bench-tls:
	bench/tls.sh

.PHONY: bench-grpc
bench-grpc:
	bench/grpc.sh

fmt:
	$(ZIG) build fmt

release:
	$(ZIG) build -Doptimize=ReleaseSafe -Dtarget=x86_64-linux-musl -Dstrip=true
	@ls -l zig-out/bin/sluice

clean:
	rm -rf zig-out .zig-cache
