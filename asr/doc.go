// Package asr will hold the streaming recognizer: Kaldi fbank features and
// the X-ASR zipformer2 transducer on ONNX Runtime, implementing
// pipeline.ASR.
package asr
