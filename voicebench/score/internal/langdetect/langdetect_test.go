package langdetect

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The expected values are CPython 3.11's for random.Random(0): three
// gauss() calls, choice(range(37)), choice(range(1000)), random().
func TestPyRandomMatchesCPython(t *testing.T) {
	r := newPyRandom(0)
	for _, want := range []float64{0.9417154046806644, -1.3965781047011498, -0.6797144480784211} {
		assert.InDelta(t, want, r.gauss(), 1e-15)
	}
	assert.Equal(t, 32, r.randBelow(37))
	assert.Equal(t, 497, r.randBelow(1000))
	assert.Equal(t, 0.4049341374504143, r.random())
}

// More cases, against langdetect itself, are in the score package's golden
// tests.
func TestDetect(t *testing.T) {
	tests := []struct{ text, want string }{
		{"This is the weather report for today, expect rain in the afternoon.", "en"},
		{"El perro corre rápidamente por el parque y los niños juegan.", "es"},
		{"Der Hund läuft schnell durch den Park.", "de"},
		{"Москва — столица России.", "ru"},
		{"今日はいい天気ですね。", "ja"},
	}
	for _, tt := range tests {
		got, err := Detect(tt.text)
		require.NoError(t, err, tt.text)
		assert.Equal(t, tt.want, got, tt.text)
	}
	for _, text := range []string{"", "12345 67890", "!!! ...", "https://example.com/a?b=c"} {
		_, err := Detect(text)
		assert.ErrorIs(t, err, ErrNoFeatures, "%q", text)
	}
	m, err := loadModel()
	require.NoError(t, err)
	assert.Len(t, m.langs, 55)
}
