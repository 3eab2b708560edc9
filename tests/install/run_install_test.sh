#!/usr/bin/env bash
# The installed tree as a site uses it (ctest install_tree, label install):
#   1. `cmake --install BUILD_DIR --prefix <tmp>/prefix` lays out bin/, share/abliterate/ (inputs/
#      and slurm/), share/doc/abliterate/ and share/modulefiles/abliterate/<version>.lua;
#   2. with Lmod, `module use <prefix>/share/modulefiles; module load abliterate` puts the installed
#      binary on PATH and sets ABLITERATE_ROOT and ABLITERATE_SHARE; from another folder a short
#      run of the model organism on the bundled prompt sets writes trials.h5;
#   3. a copy of the modulefile in another module tree falls back to the install prefix, the Tcl
#      modulefile (loaded by Lmod) finds its prefix too, and the tree moved elsewhere loads from its
#      new place (relocatable);
#   4. `cpack -G DEB` packs the build: Depends names Open MPI, HDF5 and openmpi-bin, and the
#      package extracted with dpkg-deb -x (never installed) runs and loads as a module.
# Usage: run_install_test.sh BUILD_DIR SOURCE_DIR. Exit 0 pass, 1 fail, 77 skipped (no Lmod; the
# reason is printed). ABL_LMOD_INIT names Lmod's bash init when it is not Debian's.
set -euo pipefail
BUILD=$(realpath "${1:?usage: run_install_test.sh BUILD_DIR SOURCE_DIR}")
SRC=$(realpath "${2:?usage: run_install_test.sh BUILD_DIR SOURCE_DIR}")
LMOD_INIT=${ABL_LMOD_INIT:-/usr/share/lmod/lmod/init/bash}
T0=$SECONDS

note() { echo "[$((SECONDS - T0))s] $*"; }
fail() { echo "FAIL: $*"; exit 1; }
if [ ! -f "$LMOD_INIT" ]; then
  echo "SKIPPED: Lmod not found ($LMOD_INIT): apt-get install lmod (scripts/install-deps.sh installs it)"
  exit 77
fi
[ -x "$BUILD/bin/abliterate" ] || fail "no $BUILD/bin/abliterate: build first"
VERSION=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$BUILD/CMakeCache.txt")
[ -n "$VERSION" ] || fail "no CMAKE_PROJECT_VERSION in $BUILD/CMakeCache.txt"
TMP=$(mktemp -d /tmp/abl-install.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
export HOME=$TMP/home  # Lmod's user files, away from the real home
mkdir -p "$HOME"

# --------------------------------------------------------------------------------- 1. install
P=$TMP/prefix
cmake --install "$BUILD" --prefix "$P" > "$TMP/install.log" 2>&1 || { cat "$TMP/install.log"; fail "cmake --install $BUILD --prefix $P failed"; }
for f in bin/abliterate share/abliterate/slurm/abliterate.sh share/abliterate/slurm/sweep.sh; do
  [ -x "$P/$f" ] || fail "the install tree has no executable $f"
done
for f in share/abliterate/default.ini share/abliterate/demo.ini share/abliterate/README.md \
  share/abliterate/refusal_markers.txt share/abliterate/prompts/harmless.txt \
  share/abliterate/prompts/harmful.txt share/abliterate/grids/weights.grid \
  share/abliterate/slurm/README.md share/doc/abliterate/README.md share/doc/abliterate/install.md \
  share/doc/abliterate/cluster.md "share/modulefiles/abliterate/$VERSION.lua" "share/modulefiles/abliterate/$VERSION"; do
  [ -f "$P/$f" ] || fail "the install tree has no $f"
done
note "installed into $P ($(find "$P" -type f | wc -l) files)"

# ------------------------------------------------------------------------ 2. Lmod and a run
set +u  # Lmod's shell functions read unset variables
# shellcheck source=/dev/null
source "$LMOD_INIT"
module_load() {  # PATH_TO_MODULEFILES: loads abliterate from that module tree alone
  module purge > /dev/null 2>&1
  local dirs
  IFS=: read -r -a dirs <<< "${MODULEPATH:-}"
  [ ${#dirs[@]} = 0 ] || module unuse "${dirs[@]}" > /dev/null 2>&1
  module use "$1"
  module load abliterate || fail "module load abliterate from $1 failed"
}
expect_env() {  # ROOT: what the loaded module must have set
  [ "$ABLITERATE_ROOT" = "$1" ] || fail "ABLITERATE_ROOT is '$ABLITERATE_ROOT', expected $1"
  [ "$ABLITERATE_SHARE" = "$1/share/abliterate" ] || fail "ABLITERATE_SHARE is '$ABLITERATE_SHARE', expected $1/share/abliterate"
}
module_load "$P/share/modulefiles"
expect_env "$P"
[ "$(command -v abliterate)" = "$P/bin/abliterate" ] || fail "abliterate on PATH is '$(command -v abliterate)', expected $P/bin/abliterate"
module whatis abliterate 2>&1 | grep -q "Version: $VERSION" || fail "module whatis abliterate: no 'Version: $VERSION'"
abliterate --version | grep -q "^abliterate $VERSION " || fail "abliterate --version: $(abliterate --version 2>&1 | head -1)"
note "module load abliterate: $(command -v abliterate), $(abliterate --version | head -1)"

mkdir -p "$TMP/elsewhere"
cd "$TMP/elsewhere"
# No --good/--bad: the bundled prompt sets, found beside the installed binary.
abliterate run --model "$SRC/tests/fixtures/organism" --good-split "[:40]" --bad-split "[:40]" \
  --kl-split "[400:420]" --eval-split "[400:420]" --max-response-length 16 --out run \
  --trials 4 --startup-trials 4 --trials-per-batch 2 --search sobol --threads 1 --backend cpu \
  > run.log 2>&1 || { tail -20 run.log; fail "abliterate run from $TMP/elsewhere failed"; }
[ -f run/trials.h5 ] || fail "abliterate run wrote no run/trials.h5"
abliterate report --trials run --json report.json --quiet > /dev/null || fail "abliterate report --trials run failed"
trials=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["trials"]))' report.json)
[ "$trials" = 4 ] || fail "report --trials run lists $trials trials, expected 4"
good=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["inputs"]["files"]["good"]["file"])' run/run.json)
[ "$good" = "$P/share/abliterate/prompts/harmless.txt" ] || fail "the run read its good prompts from $good, not the installed set"
note "abliterate run of the organism from $TMP/elsewhere: run/trials.h5 with 4 trials, the installed prompt sets"

# -------------------------------------------------------------------------- 3. relocation
mkdir -p "$TMP/site/abliterate"
cp "$P/share/modulefiles/abliterate/$VERSION.lua" "$TMP/site/abliterate/"
module_load "$TMP/site"
expect_env "$P"
note "a copy of the modulefile in another module tree: ABLITERATE_ROOT=$P (the install prefix)"
module purge > /dev/null 2>&1
# The Tcl modulefile (Environment Modules' format; Lmod reads it too, preferring the .lua beside it).
mkdir -p "$TMP/tcl/share/modulefiles/abliterate" "$TMP/tcl/bin"
cp "$P/share/modulefiles/abliterate/$VERSION" "$TMP/tcl/share/modulefiles/abliterate/"
cp "$P/bin/abliterate" "$TMP/tcl/bin/"
module_load "$TMP/tcl/share/modulefiles"
expect_env "$TMP/tcl"
module purge > /dev/null 2>&1
note "the Tcl modulefile (through Lmod) finds its prefix too"
mv "$P" "$TMP/moved"
module_load "$TMP/moved/share/modulefiles"
expect_env "$TMP/moved"
[ "$(command -v abliterate)" = "$TMP/moved/bin/abliterate" ] || fail "after the move, abliterate on PATH is '$(command -v abliterate)'"
abliterate --version > /dev/null || fail "the moved tree's abliterate --version failed"
note "the tree moved to $TMP/moved loads from there"
module purge > /dev/null 2>&1
set -u

# ------------------------------------------------------------------------------ 4. the .deb
command -v cpack > /dev/null && command -v dpkg-deb > /dev/null || fail "cpack or dpkg-deb not found"
(cd "$TMP" && cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$TMP/deb") > "$TMP/cpack.log" 2>&1 ||
  { tail -20 "$TMP/cpack.log"; fail "cpack -G DEB --config $BUILD/CPackConfig.cmake failed"; }
deb=$(ls "$TMP"/deb/abliterate_*.deb 2> /dev/null | head -1)
[ -n "$deb" ] || fail "cpack wrote no abliterate_*.deb into $TMP/deb"
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libopenmpi libhdf5-openmpi openmpi-bin libboost-program-options libfmt; do
  grep -q "$lib" <<< "$depends" || fail "Depends of $(basename "$deb") names no $lib: $depends"
done
dpkg-deb -c "$deb" | grep -q "\./usr/share/modulefiles/abliterate/$VERSION.lua$" || fail "$(basename "$deb") has no /usr/share/modulefiles/abliterate/$VERSION.lua"
dpkg-deb -x "$deb" "$TMP/root"
"$TMP/root/usr/bin/abliterate" --version | grep -q "^abliterate $VERSION " || fail "the extracted usr/bin/abliterate --version failed"
[ -f "$TMP/root/usr/share/abliterate/prompts/harmless.txt" ] || fail "the package has no /usr/share/abliterate/prompts/harmless.txt"
set +u
module_load "$TMP/root/usr/share/modulefiles"
expect_env "$TMP/root/usr"
set -u
note "$(basename "$deb"): Depends: $depends; extracted, its abliterate --version runs and its modulefile loads"
note "install checks passed"
