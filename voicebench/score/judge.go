package score

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

type judgeKind int

const (
	judgeOpen judgeKind = iota // a 1-5 rating
	judgeQA                    // a yes/no verdict against the reference
)

// The reference's judge prompts (api_judge.py), so that exported samples can
// be sent to a judge as VoiceBench does.
const judgePromptOpen = `
I need your help to evaluate the performance of several models in the speech interaction scenario. The models will receive a speech input from the user, which they need to understand and respond to with a speech output.
Your task is to rate the model’s responses based on the provided user input transcription [Instruction] and the model’s output transcription [Response].

Please evaluate the response on a scale of 1 to 5:
1 point: The response is largely irrelevant, incorrect, or fails to address the user’s query. It may be off-topic or provide incorrect information.
2 points: The response is somewhat relevant but lacks accuracy or completeness. It may only partially answer the user’s question or include extraneous information.
3 points: The response is relevant and mostly accurate, but it may lack conciseness or include unnecessary details that don’t contribute to the main point.
4 points: The response is relevant, accurate, and concise, providing a clear answer to the user’s question without unnecessary elaboration.
5 points: The response is exceptionally relevant, accurate, and to the point. It directly addresses the user’s query in a highly effective and efficient manner, providing exactly the information needed.

Below are the transcription of user’s instruction and models’ response:
### [Instruction]: {prompt}
### [Response]: {response}

After evaluating, please output the score only without anything else.
You don’t need to provide any explanations.
`

const judgePromptQA = `### Question
{prompt}

### Reference answer
{reference}

### Candidate answer
{response}

Is the candidate answer correct based on the question and reference answer? 
Please only output a single "Yes" or "No". Do not output anything else.`

// JudgeItem is one line of judge/SUBSET.jsonl. Index is the sample's position
// in the subset (files in name order, lines in order); samples the runner
// failed on are not exported.
type JudgeItem struct {
	Index       int    `json:"index"`
	ID          string `json:"id,omitempty"`
	Prompt      string `json:"prompt"`
	Reference   string `json:"reference,omitempty"`
	Response    string `json:"response"`
	JudgePrompt string `json:"judge_prompt"`
}

func judgePrompt(kind judgeKind, r record) string {
	if kind == judgeQA {
		return strings.NewReplacer("{prompt}", r.Prompt, "{reference}", r.Reference, "{response}", r.Response).Replace(judgePromptQA)
	}
	return strings.NewReplacer("{prompt}", r.Prompt, "{response}", r.Response).Replace(judgePromptOpen)
}

func writeJudgeExport(dir, name string, kind judgeKind, samples []sample) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for i, s := range samples {
		if s.rec.Error != "" {
			continue
		}
		id := s.rec.ID
		if id == "" {
			id = s.rec.SampleID
		}
		item := JudgeItem{Index: i, ID: string(id), Prompt: s.rec.Prompt, Response: s.rec.Response, JudgePrompt: judgePrompt(kind, s.rec)}
		if kind == judgeQA {
			item.Reference = s.rec.Reference
		}
		if err := enc.Encode(item); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, name+".jsonl"), b.Bytes(), 0o644)
}

// judgeScore is one line of judge/SUBSET.scores.jsonl: the index of the
// exported item and the judge's output(s), like the `score` field VoiceBench's
// api_judge.py writes. For open-ended subsets each output is a rating 1-5 (a
// number, a numeric string or text containing "[[n]]"); for sd-qa each is
// "yes"/"no" (or true/false) and the majority wins, a tie counting as "no".
type judgeScore struct {
	Index *int            `json:"index"`
	Score json.RawMessage `json:"score"`
}

var ratingRe = regexp.MustCompile(`\[\[(\d+)\]\]`)

// judgeValues flattens a score field into strings.
func judgeValues(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, err
		}
		var out []string
		for _, v := range list {
			s, err := judgeValues(v)
			if err != nil {
				return nil, err
			}
			out = append(out, s...)
		}
		return out, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case string:
		return []string{x}, nil
	case float64:
		return []string{strconv.FormatFloat(x, 'g', -1, 64)}, nil
	case bool:
		return []string{map[bool]string{true: "yes", false: "no"}[x]}, nil
	}
	return nil, fmt.Errorf("score %s is not a number, string, boolean or list of them", raw)
}

// judgeValue turns a sample's judge outputs into its value: the mean rating
// (open) or 1/0 for a majority of yes/no (QA).
func judgeValue(kind judgeKind, outs []string) (float64, error) {
	if len(outs) == 0 {
		return 0, errors.New("empty score")
	}
	if kind == judgeQA {
		yes := 0
		for _, o := range outs {
			if strings.EqualFold(strings.TrimSpace(o), "yes") {
				yes++
			}
		}
		if 2*yes > len(outs) {
			return 1, nil
		}
		return 0, nil
	}
	var sum float64
	for _, o := range outs {
		v, err := strconv.ParseFloat(strings.TrimSpace(o), 64)
		if err != nil {
			m := ratingRe.FindStringSubmatch(o)
			if m == nil {
				return 0, fmt.Errorf("judge output %q has no rating", o)
			}
			v, _ = strconv.ParseFloat(m[1], 64)
		}
		// Not NaN, Inf or 17: the mean of ratings is a score out of 100.
		if !(v >= 1 && v <= 5) {
			return 0, fmt.Errorf("judge output %q is not a rating 1-5", o)
		}
		sum += v
	}
	return sum / float64(len(outs)), nil
}

// parseJudgeScores reads a judge/SUBSET.scores.jsonl file of the verdicts
// on n exported samples: the value of each sample (nil for those it has
// no line for). A malformed line is an error naming name:line.
func parseJudgeScores(r io.Reader, name string, kind judgeKind, n int) ([]*float64, error) {
	values := make([]*float64, n)
	err := scanJSONL(r, name, func(_ int, line []byte) error {
		var js judgeScore
		if err := json.Unmarshal(line, &js); err != nil {
			return err
		}
		if js.Index == nil || *js.Index < 0 || *js.Index >= n {
			return fmt.Errorf("index missing or out of range 0..%d", n-1)
		}
		outs, err := judgeValues(js.Score)
		if err != nil {
			return err
		}
		v, err := judgeValue(kind, outs)
		values[*js.Index] = &v
		return err
	})
	if err != nil {
		return nil, err
	}
	return values, nil
}

// applyJudge marks sc as needing a judge or, when path exists, scores it from
// the judge's verdicts. Failed samples count as the lowest verdict.
func applyJudge(sc *SubsetScore, kind judgeKind, path string, samples []sample) error {
	sc.NeedsJudge = true
	for _, s := range samples {
		if s.rec.Error != "" {
			sc.Errors++
		}
	}
	if len(samples) == 0 {
		return nil
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	name := filepath.Join("judge", filepath.Base(path))
	values, err := parseJudgeScores(f, name, kind, len(samples))
	if err != nil {
		return err
	}

	lowest := 0.0
	if kind == judgeOpen {
		lowest = 1
	}
	var sum float64
	for i, s := range samples {
		switch {
		case s.rec.Error != "":
			sum += lowest
		case values[i] == nil:
			return fmt.Errorf("%s: no score for index %d", name, i)
		default:
			sum += *values[i]
			sc.Scored++
		}
	}
	mean := sum / float64(len(samples))
	score := 100 * mean
	if kind == judgeOpen {
		sc.JudgeMean = &mean
		score = 20 * mean
	}
	sc.NeedsJudge = false
	sc.Score = &score
	return nil
}
