package device

import (
	"context"
	"math"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
)

// These tests need a PulseAudio server with the null sinks that
// scripts/pulse-test-server.sh sets up; without one they skip.

const testSink = "va_test_sink"

func requirePulse(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("pactl"); err != nil {
		t.Skip("pactl not installed (apt-get install pulseaudio-utils); run scripts/pulse-test-server.sh")
	}
	if out, err := exec.Command("pactl", "info").CombinedOutput(); err != nil {
		t.Skipf("no PulseAudio server answers (pactl info: %v: %s); run scripts/pulse-test-server.sh", err, strings.TrimSpace(string(out)))
	}
}

func requireSink(t *testing.T, name string) {
	t.Helper()
	requirePulse(t)
	out, err := exec.Command("pactl", "list", "short", "sinks").Output()
	require.NoError(t, err)
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[1] == name {
			return
		}
	}
	t.Skipf("PulseAudio has no sink %q; run scripts/pulse-test-server.sh", name)
}

func TestPulseList(t *testing.T) {
	requireSink(t, testSink)
	infos, err := List("pulseaudio")
	require.NoError(t, err)
	has := func(name, kind string) bool {
		for _, i := range infos {
			if i.Name == name && i.Kind == kind {
				return true
			}
		}
		return false
	}
	assert.True(t, has(testSink, "playback"), "%v", infos)
	assert.True(t, has("Monitor of "+testSink, "capture"), "%v", infos)
	defaults := 0
	for _, i := range infos {
		if i.Default {
			defaults++
		}
	}
	assert.Equal(t, 2, defaults, "one default per kind: %v", infos)
}

// goertzel is the power of x at hz, normalised by length.
func goertzel(x []float32, hz, rate float64) float64 {
	w := 2 * math.Pi * hz / rate
	c := 2 * math.Cos(w)
	var s1, s2 float64
	for _, v := range x {
		s0 := float64(v) + c*s1 - s2
		s2, s1 = s1, s0
	}
	p := s1*s1 + s2*s2 - c*s1*s2
	return p / float64(len(x)*len(x))
}

// Playback through the null sink comes back on its monitor: the whole
// duplex path (player, callback, ring, resampler, framing) carries a tone.
func TestPulseToneLoopback(t *testing.T) {
	requireSink(t, testSink)
	// Selection by substring: the capture side matches only
	// "Monitor of va_test_sink", the playback side is case-insensitive.
	d, err := Open(Config{Backend: "pulseaudio", Capture: testSink, Playback: "VA_TEST"})
	require.NoError(t, err)
	defer d.Close()
	assert.Equal(t, "Monitor of "+testSink+" / "+testSink, d.name)
	require.NoError(t, d.Start())

	_, end, err := d.Player().Write(context.Background(), tone(48000, 1, 1000, 1500*time.Millisecond, 0.5))
	require.NoError(t, err)
	d.Player().EndOfReply()

	frames := collect(t, d.Frames(), 250, 10*time.Second) // 2.5 s
	require.Len(t, frames, 250, "capture stalled; err=%v stats=%+v", d.Err(), d.Stats())
	assertContiguous(t, frames, 0)
	assert.GreaterOrEqual(t, d.Clock().Now(), frames[len(frames)-1].Stop())
	assert.Equal(t, end, d.Player().Consumed(), "the whole tone was played")

	// The loudest half second must be the tone, not noise or another
	// frequency.
	var all []float32
	for _, f := range frames {
		all = append(all, f.Samples...)
	}
	win := audio.ProcessingRate / 2
	best, bestAt := 0.0, 0
	for at := 0; at+win <= len(all); at += FrameSize {
		var e float64
		for _, v := range all[at : at+win] {
			e += float64(v) * float64(v)
		}
		if e > best {
			best, bestAt = e, at
		}
	}
	seg := all[bestAt : bestAt+win]
	rms := math.Sqrt(best / float64(win))
	assert.InDelta(t, 0.5/math.Sqrt2, rms, 0.1, "tone level (sent at amplitude 0.5)")
	at1k := goertzel(seg, 1000, audio.ProcessingRate)
	for _, hz := range []float64{500, 800, 1200, 2000, 3000} {
		assert.Greater(t, at1k, 100*goertzel(seg, hz, audio.ProcessingRate), "1 kHz should dominate %v Hz", hz)
	}
	// Zero crossings give the frequency directly: two per cycle. Only a
	// swing past a tenth of the tone's amplitude counts, so that low-level
	// noise where the window meets the tone's ends adds none (a CI run
	// under load counted 1031 Hz).
	cross, positive := 0, seg[0] > 0
	for _, v := range seg[1:] {
		if v > 0.05 && !positive || v < -0.05 && positive {
			cross++
			positive = !positive
		}
	}
	hz := float64(cross) / 2 / (float64(win) / audio.ProcessingRate)
	assert.InDelta(t, 1000, hz, 20, "captured frequency")
	assert.NoError(t, d.Err())
	assert.Zero(t, d.Stats().PlaybackUnderruns, "the whole reply was queued up front")
	t.Logf("tone rms %.3f, %.0f Hz, stats %+v", rms, hz, d.Stats())
}

// Unloading the sink under a running device is the closest a test gets to
// pulling out a USB headset: PulseAudio kills our streams (miniaudio asks
// for DONT_MOVE when a device is named), miniaudio reports nothing, and
// the watchdog has to notice.
func TestPulseDeviceDisappears(t *testing.T) {
	requirePulse(t)
	const sink = "va_unplug_test"
	out, err := exec.Command("pactl", "load-module", "module-null-sink", "sink_name="+sink,
		"sink_properties=device.description="+sink, "norewinds=1").CombinedOutput()
	require.NoError(t, err, "%s", out)
	module := strings.TrimSpace(string(out))
	unloaded := false
	t.Cleanup(func() {
		if !unloaded {
			_ = exec.Command("pactl", "unload-module", module).Run()
		}
	})

	d, err := Open(Config{Backend: "pulseaudio", Capture: "monitor of " + sink, Playback: sink})
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.Start())
	require.Len(t, collect(t, d.Frames(), 20, 10*time.Second), 20, "no audio before unplugging; err=%v", d.Err())

	out, err = exec.Command("pactl", "unload-module", module).CombinedOutput()
	require.NoError(t, err, "%s", out)
	unloaded = true
	gone := time.Now()

	assert.True(t, waitClosed(d.Frames(), 3*time.Second), "Frames must close after the device disappeared")
	t.Logf("detected after %v: %v", time.Since(gone).Round(time.Millisecond), d.Err())
	require.Error(t, d.Err())
	assert.ErrorIs(t, d.Err(), ErrDeviceLost)
	assert.Contains(t, d.Err().Error(), `audio device "Monitor of va_unplug_test / va_unplug_test"`)

	closed := time.Now()
	assert.NoError(t, d.Close(), "closing a dead device must not hang or fail")
	assert.Less(t, time.Since(closed), 2*time.Second)
}
