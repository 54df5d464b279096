package tools

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGetTime(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	tests := []struct {
		name string
		now  time.Time
		want string
	}{
		{"afternoon", time.Date(2026, 12, 7, 14, 5, 59, 0, cet),
			`{"time":"14:05","date":"2026-12-07","weekday":"Monday","timezone":"CET"}`},
		{"just after midnight", time.Date(2027, 1, 1, 0, 0, 0, 0, cet),
			`{"time":"00:00","date":"2027-01-01","weekday":"Friday","timezone":"CET"}`},
		{"the device's zone, not UTC", time.Date(2026, 12, 7, 23, 30, 0, 0, time.UTC).In(time.FixedZone("CST", 8*3600)),
			`{"time":"07:30","date":"2026-12-08","weekday":"Tuesday","timezone":"CST"}`},
		{"a zone without an abbreviation", time.Date(2026, 6, 1, 9, 0, 0, 0, time.FixedZone("", 5*3600+1800)),
			`{"time":"09:00","date":"2026-06-01","weekday":"Monday","timezone":"+0530"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NewTime(func() time.Time { return tc.now }).Call(context.Background(), nil)
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, got)
		})
	}
}
