# Sourced by the scripts that link MNN (setup, test, build-arm64).

# mnn_cgo PREFIX [RPATH] points cgo at the MNN installed under PREFIX (from
# scripts/build-mnn) and, given RPATH, has the binaries find libMNN there
# at run time.
mnn_cgo() {
  local prefix=$1 rpath=${2:-} lib extra
  lib=$prefix/lib
  for f in "$prefix/include/llm/llm.hpp" "$prefix/include/MNN/expr/Expr.hpp"; do
    [ -f "$f" ] || { echo "$f missing: MNN's install lacks its headers (the LLM header comes from transformers/llm/engine/include)" >&2; return 1; }
  done
  ls "$lib"/libMNN.* >/dev/null 2>&1 || { echo "no libMNN in $lib" >&2; return 1; }
  export CGO_CPPFLAGS="${CGO_CPPFLAGS:-} -I$prefix/include"
  export CGO_LDFLAGS="${CGO_LDFLAGS:-} -L$lib${rpath:+ -Wl,-rpath,$rpath}"
  # An MNN built with MNN_SEP_BUILD=ON (its default) keeps the LLM engine
  # and the expression API in libraries of their own.
  for extra in llm MNN_Express; do
    if ls "$lib"/lib$extra.* >/dev/null 2>&1; then
      CGO_LDFLAGS="$CGO_LDFLAGS -l$extra"
    fi
  done
}
