#!/usr/bin/env bash
# Installs the Debian 12 packages that abliterate's build, tests and tools need.
# Idempotent: when every package is already installed it returns in well under a second.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libopenmpi-dev openmpi-bin
  libhdf5-openmpi-dev hdf5-tools
  libeigen3-dev
  libboost-program-options-dev
  libgtest-dev libgmock-dev
  nlohmann-json3-dev
  libpcre2-dev libutf8proc-dev libfmt-dev
  python3
)
# The tokenizer peer test runs Hugging Face's reference tokenizer under Node.js;
# take Debian's Node only when the machine has none.
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
