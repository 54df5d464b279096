// Package tts groups speech output: text chunking (tts/chunk), text
// normalization (tts/normalize), the SentencePiece tokenizer (tts/spm) and
// the MOSS-TTS-Nano synthesizer (tts/moss), which implement
// pipeline.Chunker and pipeline.Synthesizer.
package tts
