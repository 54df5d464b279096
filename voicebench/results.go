package voicebench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/voiceassistant/voice/llm"
)

// Keys the harness adds to each dataset record in OUT/SUBSET.jsonl, beside
// VoiceBench's own "response".
const (
	KeyResponse   = "response"
	KeyTranscript = "asr_transcript" // audio mode only
	KeyLatency    = "latency_ms"
	KeyError      = "error" // only when the sample failed
	KeySampleID   = "sample_id"
	KeyLLMStats   = "llm_stats" // when the LLM ran
)

// Latency is a sample's first turn's stage latencies in milliseconds of
// audio time (see pipeline.TurnMetrics); a milestone that did not happen
// (no TTS: no first audio) is absent. In text mode only FirstToken is set,
// in wall time.
type Latency struct {
	Endpoint   *float64 `json:"endpoint,omitempty"`
	ASRFinal   *float64 `json:"asr_final,omitempty"`
	FirstToken *float64 `json:"first_token,omitempty"`
	FirstAudio *float64 `json:"first_audio,omitempty"`
	EndToEnd   *float64 `json:"end_to_end,omitempty"`
}

// Result is what the assistant made of one sample.
type Result struct {
	Sample   Sample
	Response string
	// Transcript is what the recognizer heard (nil in text mode).
	Transcript *string
	Latency    Latency
	// LLM is the model's own account of its compute (prefill and decode
	// times, tokens): the cost the virtual clock's latencies leave out.
	LLM *llm.Stats
	// Error says why there is no proper response ("" if there is one).
	Error string
}

// MarshalJSON writes the sample's fields with the harness's keys added.
func (r Result) MarshalJSON() ([]byte, error) {
	rec := make(map[string]any, len(r.Sample.Fields)+5)
	for k, v := range r.Sample.Fields {
		rec[k] = v
	}
	rec[KeySampleID] = r.Sample.ID
	rec[KeyResponse] = r.Response
	rec[KeyLatency] = r.Latency
	if r.Transcript != nil {
		rec[KeyTranscript] = *r.Transcript
	}
	if r.LLM != nil {
		rec[KeyLLMStats] = r.LLM
	}
	if r.Error != "" {
		rec[KeyError] = r.Error
	}
	return json.Marshal(rec)
}

// ResultsPath is where a subset's results go in dir.
func ResultsPath(dir, subset string) string { return filepath.Join(dir, subset+".jsonl") }

// resultsFile is OUT/SUBSET.jsonl opened for appending. Each result is one
// write of a whole line, so an interruption loses at most the line being
// written, which the next run drops.
type resultsFile struct {
	mu   sync.Mutex
	f    *os.File
	done map[string]bool
}

// openResults opens (or creates) the results of subset in dir, drops a
// partial last line, and notes which samples are finished. A file with a
// bad line is left as it is.
func openResults(dir, subset string) (*resultsFile, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("voicebench: %w", err)
	}
	path := ResultsPath(dir, subset)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("voicebench: %w", err)
	}
	done, complete, err := parseDone(path, data)
	if err != nil {
		return nil, err
	}
	if complete < len(data) {
		if err := os.Truncate(path, int64(complete)); err != nil {
			return nil, fmt.Errorf("voicebench: dropping the partial last line of %s: %w", path, err)
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("voicebench: %w", err)
	}
	return &resultsFile{f: f, done: done}, nil
}

// parseDone reads the results file at path, which holds data: the ids of
// the samples it has results for, and the length of its complete lines
// (what follows is a line cut short, to be dropped). A line that is not
// a JSON object with a string sample_id is an error naming the file and
// the line.
func parseDone(path string, data []byte) (done map[string]bool, complete int, err error) {
	lines, complete, err := resultLines(path, data)
	if err != nil {
		return nil, 0, err
	}
	done = map[string]bool{}
	for _, l := range lines {
		done[l.id] = true
	}
	return done, complete, nil
}

// resultLine is one sample's line of a results file.
type resultLine struct {
	id   string
	line []byte // without its newline
}

// resultLines reads the complete lines of a results file (see parseDone).
func resultLines(path string, data []byte) (lines []resultLine, complete int, err error) {
	complete = bytes.LastIndexByte(data, '\n') + 1
	for i, line := range bytes.Split(data[:complete], []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		// The key as written, not any spelling of it (as a struct field
		// would match "Sample_ID").
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, 0, fmt.Errorf("voicebench: %s line %d: %w", path, i+1, err)
		}
		raw, ok := rec[KeySampleID]
		var id string
		if !ok || string(raw) == "null" {
			return nil, 0, fmt.Errorf("voicebench: %s line %d: no %q (not written by this harness?)", path, i+1, KeySampleID)
		}
		if err := json.Unmarshal(raw, &id); err != nil {
			return nil, 0, fmt.Errorf("voicebench: %s line %d: %q: %w", path, i+1, KeySampleID, err)
		}
		lines = append(lines, resultLine{id: id, line: line})
	}
	return lines, complete, nil
}

// finished reports whether id has a result already.
func (r *resultsFile) finished(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done[id]
}

func (r *resultsFile) append(res Result) error {
	line, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("voicebench: sample %s: %w", res.Sample.ID, err)
	}
	line = append(line, '\n')
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.f.Write(line); err != nil {
		return fmt.Errorf("voicebench: %w", err)
	}
	r.done[res.Sample.ID] = true
	return nil
}

func (r *resultsFile) close() error { return r.f.Close() }
