# Thin wrapper around CMake (the build's truth). `make` = release build in ./build.
BUILD       ?= build
BUILD_TYPE  ?= Release
JOBS        ?= $(shell nproc)
CMAKE_FLAGS ?=
SAN_BUILD    ?= build-sanitize
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60

.PHONY: all build configure test test-sanitize demo bench fuzz clean

all: build

configure:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j$(JOBS)

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
