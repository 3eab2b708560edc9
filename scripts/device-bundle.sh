#!/usr/bin/env bash
# Packs what the GPU checks need onto a machine that has the CUDA toolkit but no Debian MPI or
# HDF5 (the lent device machines): the built GPU programs and the runtime files of every Debian
# package they load, taken from this machine's installation (dpkg -L), in one folder.
#
#   scripts/device-bundle.sh [BUILD] [DEST]        # defaults: build .devcarry
#
# DEST must be git-ignored (e.g. `echo /.devcarry/ >> .git/info/exclude`). On the GPU machine,
# from the repository root:
#
#   source DEST/env.sh        # unpacks under /tmp/abl-root once; paths, Open MPI relocated, ABL_* vars
#   test_backend_cuda && test_engine_cuda && test_parallel_cuda
#                             # kernels; engine and decode graphs; one-rank sharding (compute-sanitizer too)
#   mpirun -np 4 --oversubscribe test_mpi_cuda      # StagingComm sharding, 4 ranks on one GPU
#   bench_cuda                # make bench's GPU figures
#   bash tests/driver/setup.sh && bash tests/driver/cuda_backend.sh   # the app, cuda against cpu
#   scripts/device-check.sh preflight tests sanitize driver bench hf   # all of it, logs in $OUT
#
# Checked here with the system's Open MPI, PMIx and their files hidden: the relocated copy runs
# MPI jobs on its own.
# CUDA, cuBLAS and NCCL are not packed: the GPU machine has its own.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
DEST=${2:-.devcarry}
programs=("$BUILD/bin/abliterate" "$BUILD/bin/bench_cuda" "$BUILD/tests/test_backend_cuda"
          "$BUILD/tests/test_engine_cuda" "$BUILD/tests/test_parallel_cuda" "$BUILD/tests/mpi/test_mpi_cuda")
for p in "${programs[@]}"; do
  [[ -x $p ]] || { echo "device-bundle: $p is missing; build $BUILD with the CUDA backend first" >&2; exit 1; }
done
rm -rf "$DEST" && mkdir -p "$DEST/bin"
cp "${programs[@]}" "$DEST/bin/"

# Debian packages of the shared libraries the programs load, except the C runtime and CUDA's,
# plus Open MPI's launcher, plugins and help files.
skip='/(libc|libm|libdl|librt|libpthread|ld-linux-x86-64|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libcublasLt|libnccl)\.so'
mapfile -t libs < <(for p in "${programs[@]}"; do ldd "$p"; done | awk '$3 ~ /^\// {print $3}' | grep -vE "$skip" | sort -u)
mapfile -t pkgs < <(for l in "${libs[@]}"; do dpkg -S "$(readlink -f "$l")" 2>/dev/null || dpkg -S "$l"; done |
                    cut -d: -f1 | sort -u)
pkgs+=(openmpi-bin openmpi-common libopenmpi3 libpmix2)
mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | grep -vE '^(libc6|libgcc-s1|libstdc\+\+6)$' | sort -u)
# Every file of those packages but documentation, manuals and locales.
dpkg -L "${pkgs[@]}" 2>/dev/null | while read -r f; do [[ -f $f || -L $f ]] && echo "${f#/}"; done |
  grep -vE '^usr/share/(doc|man|lintian|locale|bug)/' | sort -u > "$DEST/files.txt"
# Debian 12 merges /lib into /usr/lib: pack both under usr/lib.
tar -C / -czf "$DEST/root.tar.gz" --transform 's,^lib/,usr/lib/,' -T "$DEST/files.txt"
printf '%s\n' "${pkgs[@]}" > "$DEST/packages.txt"

cat > "$DEST/env.sh" <<'ENV'
# Sourced on the GPU machine from the repository root: the packed Debian files under /tmp/abl-root,
# their libraries and programs on the paths, Open MPI relocated there, the test fixtures of this
# checkout, and the variables the driver tests read.
_abl_dest=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ ! -d /tmp/abl-root/usr ]]; then
  mkdir -p /tmp/abl-root/mpi-bin && tar -C /tmp/abl-root -xzf "$_abl_dest/root.tar.gz"
  # Debian's mpirun is a link through /etc/alternatives, which is not packed: orterun is mpirun.
  ln -sf /tmp/abl-root/usr/bin/orterun /tmp/abl-root/mpi-bin/mpirun
  ln -sf /tmp/abl-root/usr/bin/orterun /tmp/abl-root/mpi-bin/mpiexec
fi
export LD_LIBRARY_PATH=/tmp/abl-root/usr/lib/x86_64-linux-gnu:/tmp/abl-root/usr/lib/x86_64-linux-gnu/openmpi/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$_abl_dest/bin:/tmp/abl-root/mpi-bin:/tmp/abl-root/usr/bin:$PATH
export OPAL_PREFIX=/tmp/abl-root/usr PMIX_INSTALL_PREFIX=/tmp/abl-root/usr/lib/x86_64-linux-gnu/pmix2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_plm=isolated
export ABL_FIXTURE_DIR_OVERRIDE=$PWD/tests/fixtures
export ABL_BIN=$_abl_dest/bin/abliterate ABL_MPIEXEC=/tmp/abl-root/mpi-bin/mpirun ABL_WORK=/tmp/abl-work
export ABL_PYTHON=$(command -v python3)
ENV
du -sh "$DEST"
echo "packed $(wc -l < "$DEST/files.txt") files of ${#pkgs[@]} packages and ${#programs[@]} programs into $DEST"
