// Package tts holds speech output: text chunking (tts/chunk) now, and the
// MOSS-TTS-Nano synthesizer and text normalization to come, implementing
// pipeline.Synthesizer and pipeline.Chunker.
package tts
