#!/usr/bin/env bash
# Installs the Debian 12 packages that abliterate's build, tests and tools need.
# Idempotent: when every package is already installed it returns in well under a second.
# --tools adds what the torch-based tools need (the model organism, the torch side of
# `make bench`): Debian's python3-torch and OpenBLAS (OpenMP).
# --fuzz adds what `make fuzz` needs: clang 14 with its libFuzzer, ASan and UBSan runtimes
# (libclang-rt-14-dev) and LLVM's OpenMP for the clang build.
set -euo pipefail
tools=0
fuzz=0
for arg in "$@"; do
  case "$arg" in
    --tools) tools=1 ;;
    --fuzz) fuzz=1 ;;
    *) echo "usage: $0 [--tools] [--fuzz]" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake pkg-config git
  libopenmpi-dev openmpi-bin
  libhdf5-openmpi-dev hdf5-tools
  libeigen3-dev
  libboost-program-options-dev
  libgtest-dev libgmock-dev
  nlohmann-json3-dev
  libpcre2-dev libutf8proc-dev libfmt-dev
  # Parquet prompt files: gzip and zstd pages.
  zlib1g-dev libzstd-dev
  # The tests read the HDF5 outputs back with h5py and draw the analysis plots; the chat-template
  # peer test renders genuine templates with Python's jinja2, as transformers does.
  python3 python3-numpy python3-h5py python3-matplotlib python3-jinja2
  # The install test loads the installed modulefile with a real Lmod (docs/install.md).
  lmod
  # The isa tests run the portable binary on emulated CPUs without AVX (qemu-x86_64 -cpu Nehalem).
  qemu-user
)
# The tokenizer peer test runs Hugging Face's reference tokenizer under Node.js;
# take Debian's Node only when the machine has none.
if [ "$tools" = 1 ]; then
  # python3-regex: tools/fixtures/make_tiktoken_fixture.py (class intersections in the pattern).
  packages+=(python3-torch libopenblas0-openmp python3-regex)
fi
if [ "$fuzz" = 1 ]; then
  packages+=(clang libclang-rt-14-dev libomp-14-dev)
fi
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
