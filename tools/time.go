package tools

import (
	"context"
	"time"
)

// NewTime is get_time: the device's local time, date and weekday, from now
// (time.Now on the device); its Location is the device's zone.
func NewTime(now func() time.Time) Tool {
	type result struct {
		Time     string `json:"time"`
		Date     string `json:"date"`
		Weekday  string `json:"weekday"`
		Timezone string `json:"timezone"`
	}
	return newTool("get_time",
		"Get the current local time, date and weekday.",
		`{"type":"object","properties":{}}`,
		func(context.Context, struct{}) (any, error) {
			t := now()
			return result{
				Time:     t.Format("15:04"),
				Date:     t.Format(time.DateOnly),
				Weekday:  t.Weekday().String(),
				Timezone: t.Format("MST"),
			}, nil
		})
}
