# Thin wrapper around CMake (the build's truth). `make` = release build in ./build.
BUILD       ?= build
BUILD_TYPE  ?= Release
JOBS        ?= $(shell nproc)
CMAKE_FLAGS ?=
SAN_BUILD    ?= build-sanitize
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
PREFIX       ?= /usr/local

.PHONY: all build configure install package test test-sanitize demo bench fuzz clean

all: build

configure:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j$(JOBS)

# The relocatable install tree in $(PREFIX): bin/, share/abliterate/, docs, modulefiles
# (docs/install.md), e.g. make install PREFIX=/opt/abliterate/0.1.0.
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# A Debian package of this build in $(BUILD) (for CPU builds: CMAKE_FLAGS="-DABL_CUDA=OFF -DABL_NATIVE=OFF").
package: build
	cd $(BUILD) && cpack -G DEB

# Whole suite: unit, MPI, driver, fault-injection and Slurm tests, the tokenizer peer test (npm
# reference), the fuzz corpora replayed; then the unit and MPI tests again under ASan and UBSan.
test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) --timeout 1500
	$(MAKE) test-sanitize

# The unit and MPI tests built with AddressSanitizer and UBSan (CPU only) in $(SAN_BUILD).
test-sanitize:
	bash scripts/test-sanitize.sh $(SAN_BUILD) $(JOBS)

# The main job on the bundled default model (CPU).
demo: build
	bash scripts/demo.sh $(BUILD)

# Benchmark programs printing figures, with the torch reference beside the CPU engine.
bench: build
	./scripts/install-deps.sh --tools
	bash scripts/bench.sh $(BUILD)

# The parsers' libFuzzer targets (clang, ASan, UBSan) in $(FUZZ_BUILD), each run for
# $(FUZZ_SECONDS) s from tests/fuzz/corpus; new inputs go to $(FUZZ_BUILD)/fuzz-out (docs/fuzzing.md).
fuzz:
	./scripts/install-deps.sh --fuzz
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_JOBS=$(JOBS) bash scripts/fuzz.sh $(FUZZ_BUILD)

clean:
	rm -rf $(BUILD) $(SAN_BUILD)
