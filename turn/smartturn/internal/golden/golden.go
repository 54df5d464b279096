// Package golden regenerates the test inputs shared by the smartturn package's
// golden tests and the generator scripts in scripts/models.
package golden

import "math"

const rate = 16000

// Signal regenerates the golden inputs of
// scripts/models/whisper_features_golden.py (test_signal): a 100-4000 Hz
// linear chirp at 0.5 with a silent gap from 40% to 50%, plus LCG noise.
func Signal(seconds float64) []float32 {
	n := int(math.Round(seconds * rate))
	T := float64(n) / rate
	const f0, f1 = 100.0, 4000.0
	s := uint32(12345)
	out := make([]float32, n)
	for i := range out {
		s = 1664525*s + 1013904223
		u := float64(s)/4294967296.0 - 0.5
		t := float64(i) / rate
		phase := 2 * math.Pi * (f0*t + (f1-f0)*t*t/(2*T))
		env := 1.0
		if fi := float64(i); fi >= 0.4*float64(n) && fi < 0.5*float64(n) {
			env = 0
		}
		out[i] = float32(env*0.5*math.Sin(phase) + 0.05*u)
	}
	return out
}
