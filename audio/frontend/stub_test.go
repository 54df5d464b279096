//go:build !webrtcapm

package frontend

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStubUnavailable(t *testing.T) {
	p, err := New(Config{AEC: true})
	require.ErrorIs(t, err, ErrUnavailable)
	require.Nil(t, p)
	t.Skip("frontend built without WebRTC audio processing; run: go test -tags webrtcapm ./audio/frontend/ (needs libwebrtc-audio-processing-dev)")
}
