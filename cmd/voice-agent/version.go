package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/llm/mnn"
)

// buildVersion is what a bug report needs to know about this binary.
type buildVersion struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Tags    string `json:"build_tags"`
	Go      string `json:"go"`
	// MNN is the engine the LLM was built with ("" without one).
	MNN string `json:"mnn"`
	// ONNXRuntime is the library the ONNX stages would load, or why none
	// can be.
	ONNXRuntime string `json:"onnxruntime"`
}

// commit is stamped by scripts/setup and scripts/build-arm64 (-ldflags
// -X main.commit=...); Go's own VCS stamp is used when it is there.
var commit string

func readBuildVersion(onnxLibrary string) buildVersion {
	v := buildVersion{Version: "devel", Commit: buildCommit(), Go: runtime.Version(), MNN: mnn.Version()}
	if info, ok := debug.ReadBuildInfo(); ok {
		if info.Main.Version != "" && info.Main.Version != "(devel)" {
			v.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "-tags" {
				v.Tags = s.Value
			}
		}
	}
	if err := onnx.Init(onnxLibrary); err != nil {
		v.ONNXRuntime = "not found: " + strings.SplitN(err.Error(), "\n", 2)[0]
	} else {
		v.ONNXRuntime = onnx.Version()
	}
	return v
}

// buildCommit is the commit this binary was built from: Go's VCS stamp
// where it is there, else the one scripts/setup stamps; "" for neither.
func buildCommit() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return commit
	}
	revision, dirty := commit, false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value[:min(12, len(s.Value))]
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty {
		revision += "-dirty"
	}
	return revision
}

func (v buildVersion) print(w io.Writer) {
	orNone := func(s, none string) string {
		if s == "" {
			return none
		}
		return s
	}
	fmt.Fprintf(w, "voice-agent %s (commit %s, %s)\n", v.Version, orNone(v.Commit, "unknown"), v.Go)
	fmt.Fprintf(w, "build tags: %s\n", orNone(v.Tags, "none"))
	fmt.Fprintf(w, "MNN: %s\n", orNone(v.MNN, "not built in (scripts/setup builds it)"))
	fmt.Fprintf(w, "ONNX Runtime: %s\n", v.ONNXRuntime)
}

func (a *app) versionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use: "version",
		Example: `  voice-agent version
  voice-agent version --json`,
		Short: "Version, commit, build tags and the engines this binary uses (also --version)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := readBuildVersion(a.cfg.Stages.ONNXRuntime)
			if a.json {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(v)
			}
			v.print(cmd.OutOrStdout())
			return nil
		},
	}
	a.cfg.Stages.AddONNXRuntimeFlag(cmd.Flags())
	return cmd
}
