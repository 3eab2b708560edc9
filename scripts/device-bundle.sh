#!/usr/bin/env bash
# Packs what the GPU checks need onto a machine that has the CUDA toolkit but no Debian MPI or
# HDF5 (the lent device machines): the built GPU programs and the runtime files of every Debian
# package they load, taken from this machine's installation (dpkg -L), in one folder.
#
#   scripts/device-bundle.sh [BUILD] [DEST]        # defaults: build .devcarry
#
# DEST must be git-ignored (.gitignore has /.devcarry/) and carried: the device tool's `carry`
# names it. On the GPU machine, from the repository root:
#
#   source DEST/env.sh        # unpacks under $ABL_ROOT (/tmp/abl-root); paths, Open MPI, ABL_* vars
#   bash scripts/device-check.sh     # the checks in one call (phase lease), logs in $OUT
#   test_backend_cuda && test_engine_cuda && test_parallel_cuda     # or by hand
#   mpirun -np 4 --oversubscribe --bind-to none test_mpi_cuda       # 4 ranks on one GPU
#   bench_cuda                # make bench's GPU figures
#   syspython tools/hf_check/hf_check.py --backend cuda             # Python with the machine's paths
#
# What the bundle may rely on the GPU machine for: glibc, libstdc++ and libgcc (newer there),
# and CUDA's own libraries (the driver, cudart, cuBLAS, NCCL; env.sh looks for NCCL and cuBLAS
# in the Python venv's nvidia packages when the toolkit lacks them). Every other library a packed
# program or library needs must be packed: the build fails otherwise. Open MPI and PMIx plugins
# whose libraries are not packed (InfiniBand, UCX, libfabric, PSM: nothing one machine uses) are
# left out rather than packed with their dependencies.
#
# Checked here with the system's Open MPI, PMIx, munge and fabric libraries hidden (bind mounts in
# a private mount namespace): the relocated copy runs MPI jobs and `abliterate generate` on its own.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
DEST=${2:-.devcarry}
# The device tool moves at most this much (tracked and untracked files plus carried paths).
CARRY_LIMIT_MIB=${CARRY_LIMIT_MIB:-64}

programs=("$BUILD/bin/abliterate" "$BUILD/bin/bench_cuda" "$BUILD/tests/test_backend_cuda"
          "$BUILD/tests/test_engine_cuda" "$BUILD/tests/test_parallel_cuda" "$BUILD/tests/mpi/test_mpi_cuda")
for p in "${programs[@]}"; do
  [[ -x $p ]] || { echo "device-bundle: $p is missing; build $BUILD with the CUDA backend first" >&2; exit 1; }
done

# A bundle of an older build than the checkout tests code that is not there: say so.
built=$("$BUILD/bin/abliterate" --version 2>/dev/null | sed -n 's/.*commit \([0-9a-f]*\)\(-dirty\)\{0,1\}).*/\1\2/p' || true)
head=$(git rev-parse HEAD 2>/dev/null || true)
if [[ -z $built || -z $head ]]; then
  echo "device-bundle: warning: cannot compare the build's commit (${built:-unknown}) with HEAD (${head:-unknown})" >&2
elif [[ ${built%-dirty} != "$head" ]]; then
  echo "device-bundle: warning: $BUILD was built from ${built:0:12}, HEAD is ${head:0:12}: rebuild first" >&2
elif [[ $built == *-dirty ]]; then
  echo "device-bundle: note: $BUILD was built from a checkout with uncommitted changes" >&2
fi

# What the GPU machine provides (see the header): these packages' files and CUDA's libraries.
base_pkgs='^(libc6|libgcc-s1|libstdc\+\+6)$'
device_libs='^lib(cuda|cudart|cublas|cublasLt|nccl|nvidia-[a-z0-9-]+)[.]so'

rm -rf "${DEST:?}" && mkdir -p "$DEST/bin"
cp "${programs[@]}" "$DEST/bin/"

# The Debian packages of the shared libraries the programs load, plus Open MPI's launcher, plugins
# and help files, and PMIx's needs (libpmix.so.2 loads libmunge.so.2, which no program names).
mapfile -t libs < <(for p in "${programs[@]}"; do ldd "$p"; done | awk '$3 ~ /^\// {print $3}' | sort -u |
                    while read -r l; do [[ $(basename "$l") =~ $device_libs ]] || echo "$l"; done)
mapfile -t pkgs < <(for l in "${libs[@]}"; do dpkg -S "$(readlink -f "$l")" 2>/dev/null || dpkg -S "$l" 2>/dev/null || true; done |
                    cut -d: -f1 | sort -u)
pkgs+=(openmpi-bin openmpi-common libopenmpi3 libpmix2 libmunge2)
mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | grep -vE "$base_pkgs" | sort -u)

# Every file of those packages but documentation, manuals and locales; symbolic links to folders
# (Debian 12's /lib -> usr/lib) are left out. Debian 12 merges /lib into /usr/lib: every path is
# taken under usr/lib, where env.sh puts the libraries on LD_LIBRARY_PATH.
dpkg -L "${pkgs[@]}" 2>/dev/null | while read -r f; do
    if [[ -f $f || (-L $f && ! -d $f) ]]; then echo "${f#/}"; fi
  done | sed 's,^lib/,usr/lib/,' | grep -vE '^usr/share/(doc|man|lintian|locale|bug)/' | sort -u > "$DEST/files.txt"

# Every library the packed files and programs need (ELF NEEDED entries) must be packed or be the
# GPU machine's. needs.txt: "file soname" per entry.
needs=$(mktemp) have=$(mktemp)
trap 'rm -f "$needs" "$have"' EXIT
while read -r f; do
  # (readelf fails on the files that are not ELF: help texts, scripts)
  if [[ -f /$f && ! -L /$f ]]; then readelf -d "/$f" 2>/dev/null | sed -n "s|.*(NEEDED).*\[\(.*\)\]|$f \1|p" || true; fi
done < "$DEST/files.txt" > "$needs"
for p in "${programs[@]}"; do
  readelf -d "$p" | sed -n "s|.*(NEEDED).*\[\(.*\)\]|bin/$(basename "$p") \1|p"
done >> "$needs"
base_sonames=$(dpkg -L libc6 libgcc-s1 libstdc++6 | grep -E '[.]so' | sed 's,.*/,,' | sort -u)
# unmet: the entries of needs.txt of files still packed (and of the programs) whose soname is
# neither in a folder on env.sh's LD_LIBRARY_PATH nor the GPU machine's.
unmet() {
  { echo "$base_sonames"
    grep -E '^usr/lib/x86_64-linux-gnu/(openmpi/lib/)?[^/]+$' "$DEST/files.txt" | sed 's,.*/,,'; } | sort -u > "$have"
  awk -v device="$device_libs" '
    FILENAME == ARGV[1] { have[$1] = 1; next }
    FILENAME == ARGV[2] { packed[$1] = 1; next }
    ($1 in packed || $1 ~ /^bin\//) && !($2 in have) && $2 !~ device' "$have" "$DEST/files.txt" "$needs"
}
# Plugins (loaded on demand) and the helper libraries only plugins load may go; dropping one
# can leave another plugin unmet, so repeat until nothing changes.
optional='^usr/lib/x86_64-linux-gnu/(openmpi/lib/openmpi3/|pmix2/lib/pmix/|libmca_common_)'
dropped=()
while :; do
  mapfile -t drop < <(unmet | awk '{print $1}' | grep -E "$optional" | sort -u)
  ((${#drop[@]})) || break
  dropped+=("${drop[@]}")
  # the file and its version links: libmca_common_ucx.so.40.30.2 takes libmca_common_ucx.so*
  stems=$(printf '%s\n' "${drop[@]}" | sed -E 's,(\.so)(\.[0-9.]+)?$,\1,')
  grep -vFf <(echo "$stems") "$DEST/files.txt" > "$DEST/files.txt.new" || true
  mv "$DEST/files.txt.new" "$DEST/files.txt"
done
if ((${#dropped[@]})); then
  echo "device-bundle: left out ${#dropped[@]} plugin(s) whose libraries are not packed:" \
    "$(printf '%s\n' "${dropped[@]}" | sed 's,.*/,,; s,[.]so.*,,' | sort -u | paste -sd' ')" >&2
fi
missing=$(unmet)
if [[ -n $missing ]]; then
  echo "device-bundle: these libraries are needed but neither packed nor on the GPU machine" \
       "(add their Debian packages to pkgs+=):" >&2
  sort -k2 <<<"$missing" | sed 's/^/  /' >&2
  exit 1
fi

tar -C / -czf "$DEST/root.tar.gz" -T "$DEST/files.txt"
printf '%s\n' "${pkgs[@]}" > "$DEST/packages.txt"

# The device tool refuses a working tree over its limit: count what travels (tracked and
# untracked-not-ignored files, and the bundle, which is carried) and compress the programs
# (about 2.5 times smaller) when they would not fit with room to spare for later edits.
mib() { awk '{s += $1} END {printf "%d", (s + 1048575) / 1048576}'; }
tree_mib=$( (git ls-files -z --cached --others --exclude-standard | xargs -0 stat -c %s 2>/dev/null || true) | mib)
bundle_mib=$(du -sb "$DEST" | awk '{print $1}' | mib)
if ((tree_mib + bundle_mib > CARRY_LIMIT_MIB - 4)); then
  echo "device-bundle: $tree_mib MiB of files + $bundle_mib MiB of bundle is close to the $CARRY_LIMIT_MIB MiB" \
       "limit: compressing the programs into programs.tar.gz" >&2
  tar -C "$DEST" -czf "$DEST/programs.tar.gz" bin && rm -rf "${DEST:?}/bin"
  bundle_mib=$(du -sb "$DEST" | awk '{print $1}' | mib)
fi
if ((tree_mib + bundle_mib > CARRY_LIMIT_MIB)); then
  echo "device-bundle: $tree_mib MiB of files + $bundle_mib MiB of bundle exceed the device tool's" \
       "$CARRY_LIMIT_MIB MiB; ignore or remove large untracked files" >&2
  exit 1
fi
if [[ $(realpath "$DEST") == "$PWD"/* ]] && ! git check-ignore -q "$DEST"; then
  echo "device-bundle: warning: $DEST is not git-ignored; it would travel as untracked files, twice if carried" >&2
fi

cat > "$DEST/env.sh" <<'ENV'
# Sourced by bash on the GPU machine from the repository root: unpacks the packed Debian files
# under ABL_ROOT (default /tmp/abl-root), puts their libraries and programs on the paths,
# relocates Open MPI and PMIx there, and sets the variables the tests and driver scripts read.
_abl_dest=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export ABL_ROOT=${ABL_ROOT:-/tmp/abl-root}
case $ABL_ROOT in
  /tmp/?*) ;;
  *) echo "env.sh: ABL_ROOT ($ABL_ROOT) must be a folder under /tmp: it is removed and remade" >&2; return 1 ;;
esac
# The machine's own library path and Python, saved once (a second `source` must not save the
# bundle's): Python and torch run with them (syspython below), since the bundle's Debian libgomp,
# libssl, libz... first on the path can break them.
export ABL_SYS_LD_LIBRARY_PATH=${ABL_SYS_LD_LIBRARY_PATH-${LD_LIBRARY_PATH-}}
export ABL_SYS_PYTHON=${ABL_SYS_PYTHON:-$(command -v python3 || echo python3)}
syspython() { LD_LIBRARY_PATH=$ABL_SYS_LD_LIBRARY_PATH "$ABL_SYS_PYTHON" "$@"; }
export -f syspython

# Unpacked again whenever the bundle changed: a warm machine keeps /tmp between calls. The stamp
# is written last, so that an interrupted unpacking is done again.
_abl_unpack() {
  rm -rf "$ABL_ROOT" && mkdir -p "$ABL_ROOT/mpi-bin" || return
  tar -C "$ABL_ROOT" -xzf "$_abl_dest/root.tar.gz" || return
  if [[ -f $_abl_dest/programs.tar.gz ]]; then tar -C "$ABL_ROOT" -xzf "$_abl_dest/programs.tar.gz" || return; fi
  # Debian's mpirun is a link through /etc/alternatives, which is not packed: orterun is mpirun.
  ln -sf "$ABL_ROOT/usr/bin/orterun" "$ABL_ROOT/mpi-bin/mpirun"
  ln -sf "$ABL_ROOT/usr/bin/orterun" "$ABL_ROOT/mpi-bin/mpiexec"
  echo "$_abl_sum" > "$ABL_ROOT/.bundle-sha256"
}
_abl_sum=$(cat "$_abl_dest"/*.tar.gz | sha256sum | cut -d' ' -f1)
if [[ $(cat "$ABL_ROOT/.bundle-sha256" 2>/dev/null) != "$_abl_sum" ]]; then
  echo "env.sh: unpacking the bundle under $ABL_ROOT" >&2
  _abl_unpack || { echo "env.sh: unpacking the bundle under $ABL_ROOT failed" >&2; return 1; }
fi
# The programs: in the carried folder, or compressed (a large checkout) and unpacked with the rest.
if [[ -d $_abl_dest/bin ]]; then export ABL_BUNDLE_BIN=$_abl_dest/bin; else export ABL_BUNDLE_BIN=$ABL_ROOT/bin; fi
chmod +x "$ABL_BUNDLE_BIN"/* 2>/dev/null || true  # in case the copy lost the mode bits

_abl_lib=$ABL_ROOT/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$_abl_lib:$_abl_lib/openmpi/lib:${CUDA_HOME:-/usr/local/cuda}/lib64${ABL_SYS_LD_LIBRARY_PATH:+:$ABL_SYS_LD_LIBRARY_PATH}
export PATH=$ABL_BUNDLE_BIN:$ABL_ROOT/mpi-bin:$ABL_ROOT/usr/bin:$PATH
export ABL_BIN=$ABL_BUNDLE_BIN/abliterate
# NCCL and cuBLAS are not packed; where the toolkit lacks them, the Python venv's wheels
# (nvidia-nccl-cu13, nvidia-cublas) usually hold them: add those folders.
mapfile -t _abl_missing < <(ldd "$ABL_BIN" 2>/dev/null | awk '/not found/ && $1 ~ /^lib(nccl|cublas|cublasLt|cudart)[.]so/ {print $1}')
if ((${#_abl_missing[@]})); then
  _abl_more=$(syspython - "${_abl_missing[@]}" 2>/dev/null <<'PY'
import glob, os, sys
try:
    import nvidia
except Exception:
    sys.exit(0)
dirs = []
for root in list(nvidia.__path__):
    for lib in sys.argv[1:]:
        for f in glob.glob(os.path.join(root, "*", "lib", lib)):
            if os.path.dirname(f) not in dirs:
                dirs.append(os.path.dirname(f))
print(":".join(dirs))
PY
  )
  if [[ -n $_abl_more ]]; then
    echo "env.sh: ${_abl_missing[*]} from the Python venv: $_abl_more" >&2
    export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$_abl_more
  else
    echo "env.sh: warning: abliterate lacks ${_abl_missing[*]} and the Python venv has none" >&2
  fi
fi
# The bundle's full library path, for programs that Python starts (tools/hf_check passes it on).
export ABL_LD_LIBRARY_PATH=$LD_LIBRARY_PATH

# Open MPI relocated under ABL_ROOT (OPAL_PREFIX). PMIx 4.2 ignores PMIX_INSTALL_PREFIX and looks
# for its plugins in /usr/lib/x86_64-linux-gnu/pmix2 unless told. Plugins left out of the bundle
# (InfiniBand, UCX...) would print a load error each: not shown.
export OPAL_PREFIX=$ABL_ROOT/usr
export PMIX_MCA_mca_base_component_path=$_abl_lib/pmix2/lib/pmix
export OMPI_MCA_mca_base_component_show_load_errors=0
# As ctest runs the MPI tests (tests/CMakeLists.txt ABL_MPI_TEST_ENV): root allowed, shared
# memory only, no single-copy (CMA needs ptrace rights a VM may not give), no binding (several
# ranks share the cores and the GPU), and no ssh: every rank on this machine.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_hwloc_base_binding_policy=none OMPI_MCA_plm=isolated
# The test fixtures of this checkout, and what the driver tests read (tests/driver/common.sh).
# ABL_PYTHON is the machine's Python under the bundle's path: the driver tests' Python starts
# abliterate itself (slices.sh, compare_trials.py) and needs only numpy and h5py.
export ABL_FIXTURE_DIR_OVERRIDE=$PWD/tests/fixtures
export ABL_MPIEXEC=$ABL_ROOT/mpi-bin/mpirun ABL_WORK=/tmp/abl-work
export ABL_PYTHON=${ABL_PYTHON:-$ABL_SYS_PYTHON}
unset -f _abl_unpack
unset _abl_dest _abl_sum _abl_lib _abl_missing _abl_more
ENV
du -sh "$DEST"
echo "packed $(wc -l < "$DEST/files.txt") files of ${#pkgs[@]} packages and ${#programs[@]} programs into $DEST" \
     "($tree_mib MiB of files + $bundle_mib MiB of bundle travel)"
