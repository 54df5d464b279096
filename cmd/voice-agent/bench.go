package main

import (
	"encoding/json"
	"io"

	"github.com/spf13/cobra"
)

// benchCmd groups the benchmarks that write JSON.
func (a *app) benchCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "Measure the speed of a stage"}
	cmd.AddCommand(a.benchIdleCmd(), a.benchLLMCmd(), a.benchPipelineCmd(), a.benchStagesCmd())
	return cmd
}

// writeBench writes a benchmark's result res as JSON with --json, else as
// printText prints it.
func (a *app) writeBench(cmd *cobra.Command, res any, printText func(io.Writer)) error {
	if a.json {
		return json.NewEncoder(cmd.OutOrStdout()).Encode(res)
	}
	printText(cmd.OutOrStdout())
	return nil
}
