// sherpa_xasr_golden.js: the node half of sherpa_xasr_golden.sh (read that
// script's header first). Two modes:
//
//   node sherpa_xasr_golden.js run SPEC.json OUT.json
//     SPEC: {encoder, decoder, joiner, tokens, paddingSamples, wavs: [path...]}.
//     Decodes each WAV with sherpa-onnx's OnlineRecognizer, as its websocket
//     server does at the end of a stream, and writes the token ids and
//     encoder-call counts to OUT. Run it under the sherpa_ort_spy.so preload
//     to dump the encoder inputs.
//
//   node sherpa_xasr_golden.js merge SPEC.json
//     SPEC: {root, outDir, goldenJson, paddingSeconds, paddingSamples,
//     recordings: [{name, path}], variants: [{name, result, dump, log, files}]}.
//     Splits each variant's dump into its recordings' windows, checks that
//     consecutive windows overlap bit for bit, rebuilds the feature frames,
//     checks that every variant saw the same frames, and writes
//     <name>.features.f32.gz per recording and golden.json.
'use strict';
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const crypto = require('crypto');

const SAMPLE_RATE = 16000;
const FEATURE_DIM = 80;

function fail(msg) {
  console.error('sherpa_xasr_golden.js: ' + msg);
  process.exit(1);
}

// readWav16kMono: the samples of a 16 kHz mono 16-bit PCM WAV as int16/32768,
// the scaling of audio.ReadWAVMono16k (audio/wavdata.go).
function readWav16kMono(file) {
  const b = fs.readFileSync(file);
  if (b.toString('ascii', 0, 4) !== 'RIFF' || b.toString('ascii', 8, 12) !== 'WAVE') {
    fail(file + ': not a RIFF/WAVE file');
  }
  let fmt = null;
  let data = null;
  for (let off = 12; off + 8 <= b.length;) {
    const id = b.toString('ascii', off, off + 4);
    const size = b.readUInt32LE(off + 4);
    const body = off + 8;
    if (id === 'fmt ') {
      fmt = {
        format: b.readUInt16LE(body),
        channels: b.readUInt16LE(body + 2),
        rate: b.readUInt32LE(body + 4),
        bits: b.readUInt16LE(body + 14),
      };
    } else if (id === 'data') {
      data = b.subarray(body, Math.min(body + size, b.length));
      break;
    }
    off = body + size + (size & 1);
  }
  if (!fmt || !data) fail(file + ': no fmt or data chunk');
  if (fmt.format !== 1 || fmt.channels !== 1 || fmt.rate !== SAMPLE_RATE || fmt.bits !== 16) {
    fail(file + ': want 16 kHz mono 16-bit PCM, have ' + JSON.stringify(fmt));
  }
  const n = data.length >> 1;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = data.readInt16LE(2 * i) / 32768;
  return out;
}

// tokenIds maps the token strings of a sherpa-onnx result back to ids:
// SymbolTable::operator[] (sherpa-onnx/csrc/symbol-table.cc) gives a piece
// with its leading U+2581 as a space, and Convert
// (online-recognizer-transducer-impl.h) drops <unk>; the table here has no
// <0xNN> byte pieces. A string that two ids share is refused.
function tokenTable(file) {
  const bySym = new Map();
  const dup = new Set();
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const f = line.trim().split(/\s+/);
    if (f.length !== 2) fail(file + ': bad line ' + JSON.stringify(line));
    let sym = f[0];
    if (sym.startsWith('<0x')) fail(file + ': byte-fallback pieces are not handled');
    if (Buffer.byteLength(sym) >= 3 && sym.startsWith('\u2581')) sym = ' ' + sym.slice(1);
    if (bySym.has(sym)) dup.add(sym);
    bySym.set(sym, Number(f[1]));
  }
  return {bySym, dup};
}

function run(specFile, outFile) {
  const spec = JSON.parse(fs.readFileSync(specFile, 'utf8'));
  const sherpa = require('sherpa-onnx-node');
  // Config keys as read by the addon (sherpa-onnx-node 1.13.8 types.js
  // OnlineRecognizerConfig; the same names are in sherpa-onnx.node).
  const config = {
    featConfig: {sampleRate: SAMPLE_RATE, featureDim: FEATURE_DIM},
    modelConfig: {
      transducer: {encoder: spec.encoder, decoder: spec.decoder, joiner: spec.joiner},
      tokens: spec.tokens,
      numThreads: 1,
      provider: 'cpu',
      debug: 0,
    },
    decodingMethod: 'greedy_search',
    enableEndpoint: 0,
  };
  const recognizer = new sherpa.OnlineRecognizer(config);
  const table = tokenTable(spec.tokens);
  const out = {
    sherpaOnnxVersion: sherpa.version,
    sherpaOnnxGitSha1: sherpa.gitSha1,
    sherpaOnnxGitDate: sherpa.gitDate,
    onnxruntimeVersion: sherpa.onnxruntimeVersion,
    recordings: [],
  };
  for (const wav of spec.wavs) {
    const samples = readWav16kMono(wav);
    const stream = recognizer.createStream();
    // online-websocket-server-impl.cc:88-99: the audio, then
    // end_tail_padding seconds of zeros, then InputFinished.
    stream.acceptWaveform({samples, sampleRate: SAMPLE_RATE});
    stream.acceptWaveform({samples: new Float32Array(spec.paddingSamples), sampleRate: SAMPLE_RATE});
    stream.inputFinished();
    let calls = 0;
    while (recognizer.isReady(stream)) {
      recognizer.decode(stream);
      calls++;
    }
    const r = recognizer.getResult(stream);
    const ids = r.tokens.map((t) => {
      if (table.dup.has(t)) fail(wav + ': token ' + JSON.stringify(t) + ' names two ids');
      const id = table.bySym.get(t);
      if (id === undefined) fail(wav + ': token ' + JSON.stringify(t) + ' not in ' + spec.tokens);
      return id;
    });
    out.recordings.push({wav, samples: samples.length, encoderCalls: calls, ids, text: r.text, tokens: r.tokens});
  }
  fs.writeFileSync(outFile, JSON.stringify(out, null, 1) + '\n');
}

function sha256(file) {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

// windows: the dump's [calls][29*80] float32 windows, checked against the log.
function readDump(v, calls) {
  const log = fs.readFileSync(v.log, 'utf8').trim().split('\n');
  const version = log[0].startsWith('version ') ? log[0].slice(8) : fail(v.log + ': no version line');
  const shapes = log.slice(1);
  if (shapes.length !== calls) fail(`${v.name}: ${shapes.length} encoder runs dumped, ${calls} decode calls`);
  let T = 0;
  for (const s of shapes) {
    const m = /^x 1 (\d+) 80$/.exec(s);
    if (!m) fail(`${v.name}: unexpected x shape ${s}`);
    if (T && Number(m[1]) !== T) fail(`${v.name}: x windows of different lengths`);
    T = Number(m[1]);
  }
  const buf = fs.readFileSync(v.dump);
  if (buf.length !== calls * T * FEATURE_DIM * 4) fail(`${v.name}: dump is ${buf.length} bytes`);
  const u32 = new Uint32Array(buf.buffer, buf.byteOffset, buf.length / 4);
  return {version, T, u32};
}

function merge(specFile) {
  const spec = JSON.parse(fs.readFileSync(specFile, 'utf8'));
  const golden = {
    comment: 'sherpa-onnx OnlineRecognizer (greedy_search, 1 thread, cpu) on each recording ' +
      'followed by tail_padding_samples zeros; made by scripts/models/sherpa_xasr_golden.sh',
    sherpa_onnx_version: null,
    sherpa_onnx_git: null,
    onnxruntime_version: null,
    tail_padding_seconds: spec.paddingSeconds,
    tail_padding_samples: spec.paddingSamples,
    chunk_frames: null,
    chunk_shift_frames: null,
    models: {},
    recordings: [],
  };
  const frames = new Map(); // recording name -> {bytes, count, from}
  for (const v of spec.variants) {
    const res = JSON.parse(fs.readFileSync(v.result, 'utf8'));
    const total = res.recordings.reduce((a, r) => a + r.encoderCalls, 0);
    const d = readDump(v, total);
    for (const [k, want] of [['sherpa_onnx_version', res.sherpaOnnxVersion],
      ['sherpa_onnx_git', res.sherpaOnnxGitSha1 + ' ' + res.sherpaOnnxGitDate],
      ['onnxruntime_version', d.version]]) {
      if (golden[k] !== null && golden[k] !== want) fail(`${k}: ${golden[k]} vs ${want}`);
      golden[k] = want;
    }
    if (res.onnxruntimeVersion !== d.version) {
      fail(`addon says ORT ${res.onnxruntimeVersion}, library says ${d.version}`);
    }
    golden.models[v.name] = Object.fromEntries(v.files.map((f) => [path.relative(spec.root, f).startsWith('..') ? path.basename(f) : path.relative(spec.root, f), sha256(f)]));
    const W = d.T * FEATURE_DIM;
    let call = 0;
    res.recordings.forEach((r, i) => {
      const rec = spec.recordings[i];
      const n = r.encoderCalls;
      const win = (k) => d.u32.subarray((call + k) * W, (call + k + 1) * W);
      // The shift: the smallest s for which every window's frames s.. are
      // the next one's first frames, bit for bit.
      let shift = d.T;
      if (n > 1) {
        for (let s = 1; s < d.T; s++) {
          let ok = true;
          for (let k = 0; ok && k + 1 < n; k++) {
            const a = win(k).subarray(s * FEATURE_DIM);
            const b = win(k + 1).subarray(0, (d.T - s) * FEATURE_DIM);
            for (let j = 0; j < a.length; j++) if (a[j] !== b[j]) { ok = false; break; }
          }
          if (ok) { shift = s; break; }
        }
        if (shift === d.T) fail(`${v.name} ${rec.name}: consecutive windows share no frames`);
      }
      for (const [k, want] of [['chunk_frames', d.T], ['chunk_shift_frames', shift]]) {
        if (n > 1 && golden[k] !== null && golden[k] !== want) fail(`${k}: ${golden[k]} vs ${want}`);
        if (n > 1) golden[k] = want;
      }
      const count = n === 0 ? 0 : d.T + shift * (n - 1);
      const out = new Uint32Array(count * FEATURE_DIM);
      for (let k = 0; k < n; k++) out.set(win(k), k * shift * FEATURE_DIM);
      const bytes = Buffer.from(out.buffer); // little-endian on x64
      const prev = frames.get(rec.name);
      if (prev) {
        if (prev.count !== count || !prev.bytes.equals(bytes)) {
          fail(`${rec.name}: ${v.name}'s encoder saw other features than ${prev.from}'s`);
        }
      } else {
        frames.set(rec.name, {bytes, count, from: v.name});
      }
      let g = golden.recordings[i];
      if (!g) {
        g = golden.recordings[i] = {
          name: rec.name,
          file: path.relative(spec.root, rec.path),
          samples: r.samples,
          feature_frames: count,
          features: path.relative(spec.root, path.join(spec.outDir, rec.name + '.features.f32.gz')),
          variants: {},
        };
      }
      if (g.samples !== r.samples) fail(`${rec.name}: sample counts differ`);
      g.variants[v.name] = {encoder_calls: n, token_ids: r.ids, text: r.text};
      call += n;
    });
  }
  for (const g of golden.recordings) {
    const f = frames.get(g.name);
    // mtime 0 and no name in the gzip header: the file depends on its data only.
    fs.writeFileSync(path.join(spec.root, g.features), zlib.gzipSync(f.bytes, {level: 9}));
  }
  // Arrays of numbers on one line each.
  const text = JSON.stringify(golden, null, 1)
      .replace(/\[\s*(-?[\d.]+(?:,\s*-?[\d.]+)*)\s*\]/g, (m, inner) => '[' + inner.split(/,\s*/).join(', ') + ']');
  fs.writeFileSync(spec.goldenJson, text + '\n');
}

const [mode, a, b] = process.argv.slice(2);
if (mode === 'run' && a && b) run(a, b);
else if (mode === 'merge' && a) merge(a);
else fail('usage: run SPEC.json OUT.json | merge SPEC.json');
