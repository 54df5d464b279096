// Package asr groups the streaming recognizer: Kaldi fbank features
// (asr/fbank) and the X-ASR zipformer2 transducer on ONNX Runtime
// (asr/xasr), which implements pipeline.ASR.
package asr
