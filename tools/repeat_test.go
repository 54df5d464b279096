package tools

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRepeatLastReply(t *testing.T) {
	tests := []struct {
		name string
		last string
		want string
	}{
		{"nothing said yet", "", `{"reply":"","note":"nothing was said yet"}`},
		{"English", "It's 14:05.", `{"reply":"It's 14:05."}`},
		{"Chinese", "现在是下午两点。", `{"reply":"现在是下午两点。"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NewRepeat(func() string { return tc.last }).Call(context.Background(), []byte("{}"))
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, got)
		})
	}
}
