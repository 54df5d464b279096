package event

import (
	"slices"
	"time"
)

// TurnMetrics are one turn's milestones in audio time and the stage
// latencies between them. A milestone that did not happen is zero.
type TurnMetrics struct {
	SpeechEnd time.Duration `json:"-"`
	Commit    time.Duration `json:"-"`
	ASRFinal  time.Duration `json:"-"`
	// LLMStart is when the LLM was given the conversation: at the final
	// transcript, or before the commit for a speculated reply.
	LLMStart      time.Duration `json:"-"`
	FirstToken    time.Duration `json:"-"`
	FirstAudio    time.Duration `json:"-"`
	PlaybackStart time.Duration `json:"-"`

	// Endpointing is the policy's wait (speech end -> commit).
	EndpointingMS float64 `json:"endpointing_ms"`
	// ASRMS is the final transcript's cost after commit.
	ASRMS float64 `json:"asr_ms"`
	// FirstTokenMS is the LLM's time to first token from its start.
	FirstTokenMS float64 `json:"first_token_ms"`
	// FirstAudioMS is synthesis of the first chunk after the first token
	// (including the chunker waiting for a speakable chunk).
	FirstAudioMS float64 `json:"first_audio_ms"`
	// PlaybackMS is queueing until the first sample plays.
	PlaybackMS float64 `json:"playback_ms"`
	// EndToEndMS is speech end -> playback start.
	EndToEndMS float64 `json:"end_to_end_ms"`
	// ComputeMS is the part spent in stages after the commit; PolicyMS the
	// endpointing wait. They add up to EndToEndMS.
	ComputeMS float64 `json:"compute_ms"`
	PolicyMS  float64 `json:"policy_ms"`
	// Interrupted turns were cut short by barge-in.
	Interrupted bool `json:"interrupted,omitempty"`
	// Compute is what each stage spent on the turn, measured with a
	// compute scale (pipeline.Config.ComputeScale) only.
	Compute *StageCompute `json:"stage_compute_ms,omitempty"`
	// Speculated turns were answered by a reply started at the user's
	// pause, before the commit: their first token and audio can come
	// before it, so the stage figures overlap the endpointing wait.
	Speculated bool `json:"speculated,omitempty"`
	// Path is EndToEndMS part by part as it fell after the speech ended
	// (nil for a turn whose reply never played).
	Path *PathMS `json:"path_ms,omitempty"`
	// Tools are the tool calls the reply made, in order.
	Tools []ToolSpan `json:"tools,omitempty"`
	// Chunks are where the reply's chunks sat in the player's queue, in
	// order: a replay places its playback gaps by them (pipeline.UnderrunGap).
	Chunks []ChunkSpan `json:"-"`
}

// ToolSpan is one tool call of a turn: how long it ran (audio time) and,
// if it failed, why.
type ToolSpan struct {
	Name  string  `json:"name"`
	MS    float64 `json:"ms"`
	Error string  `json:"error,omitempty"`
}

// ChunkSpan is a chunk of reply text and its audio's queue positions
// [Start, End) in the player (audio.Player.Written).
type ChunkSpan struct {
	Text       string
	Start, End uint64
}

// PathMS splits voice to voice into what each stage still had to do after
// the stage before it was done: the parts add up to EndToEndMS. The stage
// figures above are each stage's own time, from its own start; a
// speculated reply's first token and audio come during the endpointing
// wait, so on the path their parts are shorter, or nothing.
type PathMS struct {
	Endpointing float64 `json:"endpointing"`
	ASR         float64 `json:"asr"`
	FirstToken  float64 `json:"first_token"`
	FirstAudio  float64 `json:"first_audio"`
	Playback    float64 `json:"playback"`
}

// Parts are the path's parts in order, named as Summarize names them.
func (p *PathMS) Parts() []PathPart {
	if p == nil {
		return nil
	}
	return []PathPart{{"endpointing", p.Endpointing}, {"asr", p.ASR}, {"first_token", p.FirstToken},
		{"first_audio", p.FirstAudio}, {"playback", p.Playback}}
}

// PathPart is one part of voice to voice on the path.
type PathPart struct {
	Name string
	MS   float64
}

// Derive fills in the latencies from the milestones.
func (m *TurnMetrics) Derive() {
	span := func(from, to time.Duration) float64 {
		if from == 0 && to == 0 || to < from {
			return 0
		}
		return ms(to - from)
	}
	m.EndpointingMS = span(m.SpeechEnd, m.Commit)
	m.ASRMS = span(m.Commit, m.ASRFinal)
	if m.FirstToken > 0 {
		m.FirstTokenMS = span(m.LLMStart, m.FirstToken)
	}
	if m.FirstAudio > 0 {
		m.FirstAudioMS = span(m.FirstToken, m.FirstAudio)
	}
	if m.PlaybackStart > 0 {
		m.PlaybackMS = span(m.FirstAudio, m.PlaybackStart)
		m.EndToEndMS = span(m.SpeechEnd, m.PlaybackStart)
		m.PolicyMS = m.EndpointingMS
		m.ComputeMS = m.EndToEndMS - m.PolicyMS
		at := m.SpeechEnd
		onPath := func(done time.Duration) float64 {
			if done <= at {
				return 0 // done before the stage before it: off the path
			}
			d := ms(done - at)
			at = done
			return d
		}
		m.Path = &PathMS{Endpointing: onPath(m.Commit), ASR: onPath(m.ASRFinal), FirstToken: onPath(m.FirstToken),
			FirstAudio: onPath(m.FirstAudio), Playback: onPath(m.PlaybackStart)}
	}
}

// Summary is a session's latency distribution.
type Summary struct {
	Turns       int                `json:"turns"`
	Interrupted int                `json:"interrupted"`
	P50         map[string]float64 `json:"p50_ms"`
	P95         map[string]float64 `json:"p95_ms"`
}

// Summarize computes p50/p95 of each stage latency over turns that reached
// playback (the others have no end-to-end figure).
func Summarize(turns []TurnMetrics) Summary {
	s := Summary{Turns: len(turns), P50: map[string]float64{}, P95: map[string]float64{}}
	series := map[string][]float64{}
	for _, t := range turns {
		if t.Interrupted {
			s.Interrupted++
		}
		if t.PlaybackStart == 0 {
			continue
		}
		for name, v := range map[string]float64{
			"endpointing": t.EndpointingMS, "asr": t.ASRMS, "first_token": t.FirstTokenMS,
			"first_audio": t.FirstAudioMS, "playback": t.PlaybackMS,
			"end_to_end": t.EndToEndMS, "compute": t.ComputeMS, "policy": t.PolicyMS,
		} {
			series[name] = append(series[name], v)
		}
	}
	for name, v := range series {
		s.P50[name] = Percentile(v, 50)
		s.P95[name] = Percentile(v, 95)
	}
	return s
}

// Percentile is the nearest-rank percentile of v (0 for no values).
func Percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sorted := slices.Clone(v)
	slices.Sort(sorted)
	rank := int(p/100*float64(len(sorted))+0.999999) - 1
	return sorted[max(0, min(rank, len(sorted)-1))]
}
