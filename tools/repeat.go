package tools

import "context"

// NewRepeat is repeat_last_reply: the assistant's last reply, from last,
// for the model to say again when the user asks "what did you say?".
func NewRepeat(last func() string) Tool {
	type result struct {
		Reply string `json:"reply"`
		// Note keeps a model given an empty reply from making one up.
		Note string `json:"note,omitempty"`
	}
	return newTool("repeat_last_reply",
		"Get your last reply, to say it again.",
		`{"type":"object","properties":{}}`,
		func(context.Context, struct{}) (any, error) {
			r := last()
			if r == "" {
				return result{Note: "nothing was said yet"}, nil
			}
			return result{Reply: r}, nil
		})
}
