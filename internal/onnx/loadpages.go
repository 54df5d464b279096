package onnx

import (
	"path/filepath"

	"github.com/voiceassistant/voice/internal/filemap"
)

// dropLoadPages takes out of the process's resident memory the pages of
// the file at path (an optimized copy's weights) that its mappings hold
// unchanged from the file (on Linux; elsewhere it does nothing). Loading
// reads more of the file than running does: ONNX Runtime prepacks each
// MatMulNBits weight from the original weight and its scales, then finds
// the same packed bytes among the blobs saved in the file and uses those.
// The packed blobs hold the scales as the kernels read them, and on x86-64
// (AVX2) and arm64 with KleidiAI the kernels never read the original
// scales again (ONNX Runtime 1.30,
// onnxruntime/contrib_ops/cpu/quantization/matmul_nbits.cc, where
// scales_are_packed_ makes ComputeBPacked pass no scales), yet their
// mappings stay for the session's life (only B is released: PrePack's
// is_packed). Dropped, a page the kernels do read comes back from the
// page cache at its next touch; a page they never read stays out:
// 17.5 MiB of scales for X-ASR's encoder at int4, 13 for the
// synthesizer's decode step (docs/performance.md).
func dropLoadPages(path string) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	filemap.DropResident(func(name string) bool { return name == path })
}
