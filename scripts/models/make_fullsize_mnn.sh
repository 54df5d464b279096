#!/usr/bin/env bash
# Builds MNN's converter (MNNConvert) and llm_bench once per machine, then
# runs make_fullsize_mnn.py with them: the full-size random-weight
# MNN-Pocket-0.3B stand-in (see that script's docstring).
#
# Usage: scripts/models/make_fullsize_mnn.sh [--unfused] [OUT]   generate the stand-in
#        scripts/models/make_fullsize_mnn.sh --tools       only build; print the tools' dir
#
# The tools are built from the pinned MNN source, the CPU-only tarball
# ($MNN_SOURCE, default ../shared/mnn/mnn-3.6.1-87-g4d40bdbd7-cpu-src.tar.gz
# next to the clone; checked by its sha256, like scripts/build-mnn), and
# cached outside the clone under
#   ${XDG_CACHE_HOME:-~/.cache}/voice-agent/mnn/VERSION-ARCH-tools-FLAGS/
# (src/ the unpacked source, which holds llmexport.py; build/ MNNConvert,
# llm_bench and the libraries they load). Once per machine: 49 minutes here
# on 2 cores shared with other builds.
# Nothing of MNN goes into the clone.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

readonly version=3.6.1 describe=3.6.1-87-g4d40bdbd7
readonly known_tarball_sha=aa48bdc7de27e0f2fe08359cf4bfc4c2db5cddd91a46b1359a8969ed8b32e3c6
say() { echo "make_fullsize_mnn: $*" >&2; }

# The converter with its ONNX front end and protobuf (bundled), plus the LLM
# engine for llm_bench; the same kernels as scripts/build-mnn's library.
flags=(-DCMAKE_BUILD_TYPE=Release -DMNN_BUILD_CONVERTER=ON -DMNN_BUILD_PROTOBUFFER=ON
  -DMNN_BUILD_LLM=ON -DMNN_LOW_MEMORY=ON -DMNN_SUPPORT_TRANSFORMER_FUSE=ON
  -DMNN_SEP_BUILD=OFF -DMNN_BUILD_TOOLS=OFF
  -DCMAKE_SHARED_LINKER_FLAGS=-Wl,-z,noexecstack)
cxx=${CXX:-c++}
for tool in cmake "$cxx" flock; do
  command -v "$tool" >/dev/null || { say "$tool not found; run scripts/setup"; exit 2; }
done
key=$(printf '%s\n' "${flags[@]}" "$("$cxx" --version | head -1)" | sha256sum | cut -c1-10)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/voice-agent/mnn/$describe-$(uname -m)-tools-$key

build_tools() {
  [ -f "$cache/.complete" ] && return 0
  mkdir -p "$cache"
  exec 9>"$cache/.lock"
  flock 9
  [ -f "$cache/.complete" ] && return 0
  local source=${MNN_SOURCE:-$root/../shared/mnn/mnn-$describe-cpu-src.tar.gz}
  [ -f "$source" ] || { say "no MNN source tarball at $source; set MNN_SOURCE"; exit 3; }
  echo "$known_tarball_sha  $source" | sha256sum -c --status ||
    { say "$source is not the pinned MNN tarball (sha256 $known_tarball_sha)"; exit 1; }
  local src=$cache/src build=$cache/build start have
  rm -rf "$src" && mkdir -p "$src"
  tar -xzf "$source" -C "$src" --strip-components=1
  have=$(sed -n 's/^#define MNN_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' "$src/include/MNN/MNNDefine.h" | paste -sd.)
  [ "$have" = "$version" ] || { say "$source holds MNN $have, not $version"; exit 1; }
  say "building MNNConvert and llm_bench $describe (up to an hour on 2 cores, once per machine; cached in $cache)"
  start=$(date +%s)
  cmake -S "$src" -B "$build" "${flags[@]}" -DCMAKE_CXX_COMPILER="$cxx" >"$cache/build.log" 2>&1 &&
    nice cmake --build "$build" --target MNNConvert llm_bench -j"${JOBS:-$(nproc)}" >>"$cache/build.log" 2>&1 || {
    tail -20 "$cache/build.log" >&2
    say "building the MNN tools failed; the whole log is $cache/build.log"
    exit 1
  }
  touch "$cache/.complete"
  say "built the MNN tools in $(( $(date +%s) - start )) s"
}

build_tools
if [ "${1:-}" = "--tools" ]; then
  echo "$cache"
  exit 0
fi
exec /usr/bin/python3 "$here/make_fullsize_mnn.py" \
  --mnn-src "$cache/src" --mnnconvert "$cache/build/MNNConvert" "$@"
