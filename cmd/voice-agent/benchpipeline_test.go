package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/voiceassistant/voice/bench"
)

// The report says where each underrun fell: between chunks (the next
// began late) or inside one (synthesized slower than it played).
func TestBenchPipelineSaysWhereUnderrunsFell(t *testing.T) {
	var out bytes.Buffer
	printBench(&out, bench.PipelineResult{Underruns: 9, UnderrunGaps: []bench.UnderrunGap{
		{Reply: 3, Chunk: 1, Chunks: 3, AtMS: 462, GapMS: 80, Between: true},
		{Reply: 7, Chunk: 2, Chunks: 2, AtMS: 2250, GapMS: 10},
	}})
	for _, want := range []string{
		"underruns after a reply's first audio: 9",
		"dry 80 ms in reply 3, 0.46 s into its audio, after chunk 1 of 3 (the next began late)",
		"dry 10 ms in reply 7, 2.25 s into its audio, inside chunk 2 of 2 (synthesized slower than it played)",
	} {
		assert.Contains(t, out.String(), want)
	}
}
