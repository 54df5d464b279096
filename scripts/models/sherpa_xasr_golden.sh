#!/usr/bin/env bash
# sherpa_xasr_golden.sh: the reference tokens and features of issue 75, from
# sherpa-onnx (X-ASR's reference runtime) itself. Run once by hand, outside
# the test suite and CI; its output is committed:
#
#   asr/xasr/testdata/sherpa/golden.json          versions, tail padding, and
#       per recording: its samples, its feature frames and, per model
#       variant, the token ids sherpa-onnx decoded and its encoder calls
#       (with the sha256 of every model file used, per variant)
#   asr/xasr/testdata/sherpa/<name>.features.f32.gz   the feature frames
#       sherpa-onnx gave the encoder: little-endian float32, frames x 80
#   asr/xasr/testdata/sherpa/en_noise.wav, zh_cmn.wav  two of the recordings
#       (made here with espeak-ng and sox when absent; kept when present)
#
# Rerun:   scripts/models/sherpa_xasr_golden.sh [--tail-padding SECONDS]
#          (0.8 by default; XASR_FULLSIZE_DIR=DIR names a full-size stand-in
#          already made by make_fullsize_xasr.py, to skip its 73 s).
# Needs: node >= 18 with npm (registry access the first time), gcc, sox,
# espeak-ng (only to remake the recordings), go, /usr/bin/python3 with torch
# and onnx (only to make the full-size stand-in).
#
# What it does:
#  1. Installs sherpa-onnx-node@1.13.8 and sherpa-onnx-linux-x64@1.13.8 (the
#     latter carries libsherpa-onnx-c-api.so and ONNX Runtime 1.28.2) from
#     npm into $XDG_CACHE_HOME/voice-agent/sherpa-onnx-1.13.8, each tarball
#     checked against its pinned npm integrity (skipped when installed).
#  2. Compiles sherpa_ort_spy.c, an LD_PRELOAD shim that patches OrtApi::Run
#     and dumps the "x" input (f32 [1, 29, 80]) of every encoder run.
#  3. Decodes every recording with every model variant (tiny, tiny-int4,
#     fullsize-fp32, fullsize-int4; sherpa_xasr_golden.js run) as
#     sherpa-onnx's websocket server ends a stream: AcceptWaveform(audio),
#     AcceptWaveform(end_tail_padding s of zeros), InputFinished
#     (sherpa-onnx/csrc/online-websocket-server-impl.h:65 end_tail_padding =
#     0.8, online-websocket-server-impl.cc:94-99), then Decode while IsReady
#     (online-recognizer-transducer-impl.h:248-251: ready while
#     processed + ChunkSize() < NumFramesReady(); each Decode feeds frames
#     [processed, processed + T) and advances by decode_chunk_len,
#     lines 287-306; ChunkSize/ChunkShift = T/decode_chunk_len from the
#     encoder's metadata, online-zipformer2-transducer-model.h:48-50). Greedy
#     search: argmax of the joiner, blank (0) and <unk> both count as blank
#     (online-transducer-greedy-search-decoder.cc:130-136). Features:
#     featConfig sampleRate 16000, featureDim 80, the rest sherpa-onnx's
#     defaults (features.cc; samples in [-1, 1] are used as given,
#     normalize_samples, lines 73-81). Result strings map back to ids through
#     tokens.txt (symbol-table.cc:191-200 writes a leading U+2581 as a space;
#     Convert drops <unk>, online-recognizer-transducer-impl.h:44-48).
#  4. Rebuilds each recording's frames from the dumped windows (window k
#     starts at frame shift*k; the overlaps are checked bit for bit and give
#     the shift), checks that all variants fed the same frames, writes them
#     and golden.json (sherpa_xasr_golden.js merge).
# Source line numbers are of k2-fsa/sherpa-onnx at 634265c9b (CMake version
# 1.13.4, the newest tree at hand; the npm 1.13.8 build is sha 11afbd00).
# Recordings are read as int16/32768, as audio.ReadWAVMono16k reads them.
set -euo pipefail

VERSION=1.13.8
declare -A INTEGRITY=(
  [sherpa-onnx-node]=sha512-MsDMBdhLFTZ1GwvcGSSQhnS7g/EA8OMH6IYysCVUOM7j8Icty9KRc0E6YT1A5fWBsZwRfKOeh88QC95aRvS8ag==
  [sherpa-onnx-linux-x64]=sha512-6plnhjagsSeTntCgnlag86hWbs/uZE9Crms1LgOb68/1nKsIQjMd+WG519m+aPwT6TrsBOiEMzrx41t8sL5L5g==
)

padding=0.8
while [ $# -gt 0 ]; do
  case $1 in
    --tail-padding) padding=$2; shift 2 ;;
    *) echo "usage: $0 [--tail-padding SECONDS]" >&2; exit 2 ;;
  esac
done

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/voice-agent/sherpa-onnx-$VERSION
work=$cache/work
out=$root/asr/xasr/testdata/sherpa
go=$(command -v go || echo /usr/local/go/bin/go)
say() { echo "sherpa_xasr_golden: $*" >&2; }
mkdir -p "$cache/node_modules" "$work" "$out"

# 1. sherpa-onnx from npm.
for pkg in sherpa-onnx-node sherpa-onnx-linux-x64; do
  dest=$cache/node_modules/$pkg
  if [ "$(cat "$dest/.npm-integrity" 2>/dev/null)" = "${INTEGRITY[$pkg]}" ]; then continue; fi
  say "installing $pkg@$VERSION"
  tmp=$(mktemp -d "$cache/pack.XXXXXX")
  (cd "$tmp" && npm pack --silent "$pkg@$VERSION" >/dev/null)
  tgz=$tmp/$pkg-$VERSION.tgz
  got=sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)
  if [ "$got" != "${INTEGRITY[$pkg]}" ]; then
    say "$pkg@$VERSION: integrity $got, want ${INTEGRITY[$pkg]}"; exit 1
  fi
  rm -rf "$dest"; mkdir -p "$dest"
  tar -C "$dest" --strip-components=1 -xzf "$tgz"
  echo "${INTEGRITY[$pkg]}" > "$dest/.npm-integrity"
  rm -rf "$tmp"
done
ortlib=$cache/node_modules/sherpa-onnx-linux-x64/libonnxruntime.so

# 2. The shim, against onnxruntime_go's vendored C API header.
ortgo=$(cd "$root" && "$go" list -m -f '{{.Dir}}' github.com/yalue/onnxruntime_go)
gcc -O2 -Wall -Wextra -shared -fPIC -I"$ortgo" -o "$cache/sherpa_ort_spy.so" \
  "$here/sherpa_ort_spy.c" -ldl -lpthread

# The recordings: two kept in place, two made here once.
if [ ! -e "$out/en_noise.wav" ]; then
  say "making en_noise.wav"
  espeak-ng -v en-us -s 160 -w "$work/en.wav" "Please turn off the kitchen lights at seven."
  sox -D "$work/en.wav" -r 16000 -c 1 -b 16 "$work/en16.wav" gain -n -3
  dur=$(soxi -D "$work/en16.wav")
  sox -R -D -n -r 16000 -c 1 -b 16 "$work/pink.wav" synth "$dur" pinknoise gain -n -20
  rms=$(sox "$work/pink.wav" -n stats 2>&1 | awk '/^RMS lev dB/ {print $4}')
  sox -D "$work/pink.wav" "$work/pink35.wav" gain "$(awk -v r="$rms" 'BEGIN {print -35 - r}')"
  sox -D -m -v 1 "$work/en16.wav" -v 1 "$work/pink35.wav" -r 16000 -c 1 -b 16 "$out/en_noise.wav"
fi
if [ ! -e "$out/zh_cmn.wav" ]; then
  say "making zh_cmn.wav"
  espeak-ng -v cmn -s 160 -w "$work/zh.wav" "打开客厅的灯"
  sox -D "$work/zh.wav" -r 16000 -c 1 -b 16 "$out/zh_cmn.wav" gain -n -3
fi
names=(speech_16k demo en_noise zh_cmn)
wavs=("$root/asr/fbank/testdata/speech_16k.wav" "$root/test/testdata/demo.wav"
  "$out/en_noise.wav" "$out/zh_cmn.wav")

# The model variants.
tiny=$root/asr/xasr/testdata/tiny
fsdir=${XASR_FULLSIZE_DIR:-$cache/fullsize/xasr-zh-en-streaming-160ms}
if [ ! -e "$fsdir/encoder-160ms.onnx" ]; then
  say "making the full-size stand-in (about a minute)"
  /usr/bin/python3 "$here/make_fullsize_xasr.py" "$cache/fullsize"
  fsdir=$cache/fullsize/xasr-zh-en-streaming-160ms
fi
# quantize IN OUT KEEP: the project's int4 copy of IN (scripts/bench-scale's
# quantized()), remade when IN changed.
quantize() {
  local in=$1 to=$2 keep=$3 stamp
  stamp=$(cat "$in"/*.onnx | sha256sum | cut -c1-64)
  [ "$(cat "$to.stamp" 2>/dev/null)" = "$stamp" ] && return
  [ -x "$cache/voice-agent" ] || (cd "$root" && "$go" build -o "$cache/voice-agent" ./cmd/voice-agent)
  rm -rf "$to"
  "$cache/voice-agent" models quantize --bits 4 --block-size 32 --keep "$keep" "$in" "$to"
  echo "$stamp" > "$to.stamp"
}
rm -rf "$work/tiny-in"; mkdir -p "$work/tiny-in"
cp "$tiny"/*.onnx "$root/asr/xasr/testdata/tokens.txt" "$work/tiny-in/"
quantize "$work/tiny-in" "$cache/tiny-int4" decoder.onnx
quantize "$fsdir" "$cache/fullsize-int4" decoder-160ms.onnx

# variant NAME DIR ENCODER DECODER JOINER TOKENS
variants=()
declare -A V_ENC V_DEC V_JOIN V_TOK V_DIR
variant() {
  variants+=("$1"); V_DIR[$1]=$2; V_ENC[$1]=$2/$3; V_DEC[$1]=$2/$4; V_JOIN[$1]=$2/$5; V_TOK[$1]=$6
}
variant tiny "$tiny" encoder.int8.onnx decoder.onnx joiner.int8.onnx "$root/asr/xasr/testdata/tokens.txt"
variant tiny-int4 "$cache/tiny-int4" encoder.int8.onnx decoder.onnx joiner.int8.onnx "$cache/tiny-int4/tokens.txt"
variant fullsize-fp32 "$fsdir" encoder-160ms.onnx decoder-160ms.onnx joiner-160ms.onnx "$fsdir/tokens.txt"
variant fullsize-int4 "$cache/fullsize-int4" encoder-160ms.onnx decoder-160ms.onnx joiner-160ms.onnx "$cache/fullsize-int4/tokens.txt"

# end_tail_padding * sample_rate in float32, truncated (online-websocket-server-impl.cc:94-95).
samples=$(node -e 'console.log(Math.trunc(Math.fround(Math.fround(+process.argv[1]) * 16000)))' "$padding")
json_list() { node -e 'console.log(JSON.stringify(process.argv.slice(1)))' "$@"; }

# 3. Decode.
merge_variants=()
for v in "${variants[@]}"; do
  say "decoding with $v"
  spec=$work/$v.spec.json
  cat > "$spec" <<EOF
{"encoder": "${V_ENC[$v]}", "decoder": "${V_DEC[$v]}", "joiner": "${V_JOIN[$v]}",
 "tokens": "${V_TOK[$v]}", "paddingSamples": $samples, "wavs": $(json_list "${wavs[@]}")}
EOF
  rm -f "$work/$v.x.f32" "$work/$v.x.log"
  NODE_PATH=$cache/node_modules ORT_SPY_X=$work/$v.x.f32 ORT_SPY_LOG=$work/$v.x.log \
    ORT_SPY_ORT_LIB=$ortlib LD_PRELOAD=$cache/sherpa_ort_spy.so \
    node "$here/sherpa_xasr_golden.js" run "$spec" "$work/$v.result.json"
  if [ ! -s "$work/$v.x.f32" ]; then
    say "$v: the shim dumped nothing (OrtGetApiBase not interposed?)"; exit 1
  fi
  files=("${V_ENC[$v]}" "${V_DEC[$v]}" "${V_JOIN[$v]}" "${V_TOK[$v]}")
  for f in "${V_DIR[$v]}"/*.data; do [ -e "$f" ] && files+=("$f"); done
  merge_variants+=("{\"name\": \"$v\", \"result\": \"$work/$v.result.json\", \"dump\": \"$work/$v.x.f32\", \"log\": \"$work/$v.x.log\", \"files\": $(json_list "${files[@]}")}")
done

# 4. Frames and golden.json.
recs=()
for i in "${!names[@]}"; do recs+=("{\"name\": \"${names[$i]}\", \"path\": \"${wavs[$i]}\"}"); done
spec=$work/merge.json
(IFS=,; cat > "$spec" <<EOF
{"root": "$root", "outDir": "$out", "goldenJson": "$out/golden.json",
 "paddingSeconds": $padding, "paddingSamples": $samples,
 "recordings": [${recs[*]}], "variants": [${merge_variants[*]}]}
EOF
)
node "$here/sherpa_xasr_golden.js" merge "$spec"
say "wrote $out/golden.json and ${#names[@]} feature files"
