// Package vad will hold the Silero VAD v5 session and the streaming
// speech/silence state machine that implements pipeline.VAD. Until it
// lands, replays use the energy VAD test double in pipeline/pipelinetest.
package vad
