package pipeline

import (
	"context"
	"time"

	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
)

// ChargeCompute puts a generator's compute on a replay clock. A replay
// normally holds its virtual clock while the LLM works, so a reply costs no
// audio time however slow the model is, and a barge-in can only land once
// generation is over. Through ChargeCompute each piece reaches the pipeline
// only after the wall time since the previous one, times scale, has passed
// on clk (1: this machine's speed; 50: a device 50 times slower), and the
// rest of the pipeline runs meanwhile: the user can interrupt a reply
// while it is still being generated, as on a device. The engine waits
// inside emit meanwhile (MNN decodes between two calls of emit).
func ChargeCompute(gen Generator, clk clock.Clock, scale float64) Generator {
	return &chargedGenerator{gen: gen, clk: clk, scale: scale}
}

type chargedGenerator struct {
	gen   Generator
	clk   clock.Clock
	scale float64
}

func (c *chargedGenerator) RollsBack() bool { return rollsBack(c.gen) }

func (c *chargedGenerator) Generate(ctx context.Context, conv []llm.Message, emit func(string) error) (llm.Stats, error) {
	last := time.Now()
	return c.gen.Generate(ctx, conv, func(piece string) error {
		computed := time.Since(last)
		if err := c.clk.Sleep(ctx, time.Duration(float64(computed)*c.scale)); err != nil {
			return err
		}
		err := emit(piece)
		last = time.Now()
		return err
	})
}
