package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/voiceassistant/voice/assets"
	"github.com/voiceassistant/voice/internal/graphedit"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/quantize"
)

func (a *app) quantizeCmd() *cobra.Command {
	var format quantize.Format
	var keep []string
	cmd := &cobra.Command{
		Use: "quantize IN OUT",
		Example: `  voice-agent models quantize smart-turn-v3.2-cpu.onnx smart-turn-int8.onnx
  voice-agent models quantize --keep decoder-160ms.onnx xasr-zh-en-streaming-160ms xasr-int8
  voice-agent models quantize --bits 4 MOSS-TTS-Nano-100M-ONNX moss-int4
  voice-agent models quantize --bits 4 --block-size 64 --keep decoder-160ms.onnx xasr-zh-en-streaming-160ms xasr-int4-b64
  scripts/bench-scale   # the full-size stand-ins, quantized and measured`,
		Short: "Store an ONNX model's weights in 8 or 4 bits, for less memory on the device",
		Long: `Writes OUT: IN with its weights quantized, activations, inputs and outputs
as they were. MatMul weights become ONNX Runtime's MatMulNBits and embedding
tables its GatherBlockQuantized, --bits 8 or 4 in blocks of --block-size
weights with a scale each, computed from directly, and so does a Gemm that is
a MatMul with a bias (a joiner's or classifier's output layer), in 8 bits
whatever --bits says; Conv weights (and other Gemms') are stored as int8 per
output channel, dequantized in front of their operator at run time. Larger blocks take less memory and follow the original less
closely (docs/performance.md has both for the full-size stand-ins).

IN is a model file (OUT gets the model with its weights inside), or a
model set's directory (OUT becomes the set's quantized copy: every .onnx
quantized but those named by --keep, every other file copied, and weights
kept in external data files stay in files of the same names, shared by
the graphs that shared them). Use the result with the stage's model flag
(--turn-model, --asr-model-dir, --tts-model-dir, ...) and compare it with
bench stages.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, out := args[0], args[1]
			if info, err := os.Stat(in); err != nil {
				return err
			} else if info.IsDir() {
				graphs, err := quantize.Dir(in, out, format, keep)
				if err != nil {
					return fmt.Errorf("%s: %w", in, err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %d graphs quantized (%s); set %s -> %s\n", out, len(graphs),
					strings.Join(graphs, ", "), assets.FormatSize(dirSize(in)), assets.FormatSize(dirSize(out)))
				return nil
			}
			model, err := os.ReadFile(in)
			if err != nil {
				return err
			}
			size := int64(len(model))
			model, err = graphedit.Inline(model, filepath.Dir(in))
			if err != nil {
				return fmt.Errorf("%s: %w", in, err)
			}
			q, st, err := quantize.Bits(model, format)
			if err != nil {
				return fmt.Errorf("%s: %w", in, err)
			}
			if err := os.WriteFile(out, q, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %d weights, %s fp32 -> %s quantized; file %s -> %s\n", out, st.Weights,
				assets.FormatSize(st.FP32Bytes), assets.FormatSize(st.Int8Bytes), assets.FormatSize(size), assets.FormatSize(int64(len(q))))
			return nil
		},
	}
	cmd.Flags().IntVar(&format.Bits, "bits", 8, "bits per MatMul weight and embedding: 8 or 4 (Gemm and Conv weights are 8-bit either way)")
	cmd.Flags().IntVar(&format.Block, "block-size", quantize.DefaultBlock, "MatMul weights (embedding values) per scale: 16, 32, 64, 128 or 256")
	cmd.Flags().StringSliceVar(&keep, "keep", nil, "with a directory: graphs copied as they are (e.g. X-ASR's decoder, which sherpa-onnx keeps fp32)")
	return cmd
}

// graphAgreement is how one graph of a quantized set follows the original.
type graphAgreement struct {
	Graph   string               `json:"graph"`
	Outputs []quantize.Agreement `json:"outputs"`
}

func (a *app) compareCmd() *cobra.Command {
	var threads int
	cmd := &cobra.Command{
		Use: "compare ORIGINAL QUANTIZED",
		Example: `  voice-agent models compare smart-turn-v3.2-cpu.onnx smart-turn-int8.onnx
  voice-agent models compare xasr-zh-en-streaming-160ms xasr-int8 --json`,
		Short: "How closely a quantized model's outputs follow the original's",
		Long: `Runs ORIGINAL and QUANTIZED on the same input, made from the original's
declared inputs (a fixed smooth pattern for floats, 1 for integers), and
reports for each output the cosine similarity, the largest difference, and
the agreement: for a float output the share of rows (last axis) whose
largest element is at the same index, which for logits is the share of
greedy choices kept; for an integer output (sampled ids) the share of equal
elements. With directories, every graph
present in both is compared.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			pairs, err := graphPairs(args[0], args[1])
			if err != nil {
				return err
			}
			opts := onnx.Options{Library: a.cfg.Stages.ONNXRuntime, IntraThreads: threads}
			var res []graphAgreement
			for _, p := range pairs {
				outs, err := quantize.Compare(p[0], p[1], opts)
				if err != nil {
					return err
				}
				res = append(res, graphAgreement{Graph: filepath.Base(p[0]), Outputs: outs})
			}
			if a.json {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(res)
			}
			for _, g := range res {
				first := g.Outputs[0]
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %d outputs; %s: cosine %.6f, max difference %.4g, agreement %.3f",
					g.Graph, len(g.Outputs), first.Output, first.Cosine, first.MaxAbsDiff, first.Agree)
				if len(g.Outputs) > 1 {
					worst := g.Outputs[0]
					for _, o := range g.Outputs {
						if !o.Integer && (worst.Integer || o.Cosine < worst.Cosine) {
							worst = o
						}
					}
					least := slices.MinFunc(g.Outputs, func(x, y quantize.Agreement) int { return cmp.Compare(x.Agree, y.Agree) })
					fmt.Fprintf(cmd.OutOrStdout(), "; least cosine %.6f (%s), least agreement %.3f (%s)", worst.Cosine, worst.Output, least.Agree, least.Output)
				}
				fmt.Fprintln(cmd.OutOrStdout())
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&threads, "threads", 1, "CPU threads per model")
	return cmd
}

// graphPairs pairs two model files, or the .onnx files two directories
// both have.
func graphPairs(original, quantized string) ([][2]string, error) {
	info, err := os.Stat(original)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return [][2]string{{original, quantized}}, nil
	}
	entries, err := os.ReadDir(original)
	if err != nil {
		return nil, err
	}
	var pairs [][2]string
	for _, e := range entries {
		q := filepath.Join(quantized, e.Name())
		if _, err := os.Stat(q); filepath.Ext(e.Name()) == ".onnx" && err == nil {
			pairs = append(pairs, [2]string{filepath.Join(original, e.Name()), q})
		}
	}
	if len(pairs) == 0 {
		return nil, fmt.Errorf("%s and %s have no .onnx file in common", original, quantized)
	}
	return pairs, nil
}

// dirSize is the total size of the files in dir.
func dirSize(dir string) int64 {
	var n int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if info, err := e.Info(); err == nil && !e.IsDir() {
			n += info.Size()
		}
	}
	return n
}
