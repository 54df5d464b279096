package main

import (
	"image"
	"image/color"
	_ "image/png"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/app"
	"github.com/voiceassistant/voice/internal/testenv"
)

// screenshotScript runs in the virtual X server: the app replays the demo
// in real time, and once it has written its dump (the session is over)
// the screen is captured and the app asked to quit.
const screenshotScript = `
"$BIN" --replay "$DATA/demo.wav" --script "$DATA/demo.json" \
	--vad energy --asr scripted --turn none --llm scripted --tts tone \
	--dump-when-done "$DUMP" &
pid=$!
i=0
while [ ! -s "$DUMP" ] && kill -0 $pid 2>/dev/null && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i+1))
done
sleep 1 # let the last frame be drawn
import -window root "$PNG"
kill -TERM $pid
wait $pid
`

// Under Xvfb, the real app renders the demo conversation: its dump must
// match and the screenshot must show a drawn window. It starts over the
// empty settings file a run cut off while saving leaves, which fyne
// cannot read: set aside, with a word, and no "Fyne error".
func TestAppUnderXvfb(t *testing.T) {
	for _, tool := range []string{"xvfb-run", "import"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Missing(t, tool+" not installed (packages xvfb, imagemagick)")
		}
	}
	dir := t.TempDir()
	bin := buildApp(t, dir)

	data, err := filepath.Abs("../../test/testdata")
	require.NoError(t, err)
	dump := filepath.Join(dir, "dump.txt")
	png := filepath.Join(dir, "screen.png")
	if p := os.Getenv("VOICE_ASSISTANT_SCREENSHOT"); p != "" {
		png = p // kept for a person to look at
	}
	config := filepath.Join(dir, "config")
	prefs := filepath.Join(config, "fyne", appID, "preferences.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(prefs), 0o700))
	require.NoError(t, os.WriteFile(prefs, nil, 0o600))
	cmd := exec.Command("xvfb-run", "-a", "-s", "-screen 0 1024x768x24", "sh", "-c", screenshotScript)
	cmd.Env = append(os.Environ(), "BIN="+bin, "DATA="+data, "DUMP="+dump, "PNG="+png,
		"HOME="+dir, "XDG_CONFIG_HOME="+config, "LANG=C.UTF-8")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "xvfb-run: %s", out)
	assert.NotContains(t, string(out), "Fyne error")
	assert.Contains(t, string(out), "voice-assistant: the saved settings were cut short")
	t.Logf("screenshot: %s", png)

	// The window as it stands when the demo has ended: the same content
	// the app package's widget test sees, here from the real app on X.
	want, err := os.ReadFile("../../app/testdata/demo_window.txt")
	require.NoError(t, err)
	got, err := os.ReadFile(dump)
	require.NoError(t, err, "the app wrote no dump; its output: %s", out)
	assert.Equal(t, string(want), string(got))

	f, err := os.Open(png)
	require.NoError(t, err)
	defer f.Close()
	img, _, err := image.Decode(f)
	require.NoError(t, err)
	assert.Equal(t, image.Rect(0, 0, 1024, 768), img.Bounds())
	counts := colorCounts(img)
	// An empty X screen is one colour; a window with text has hundreds
	// (anti-aliasing).
	assert.Greater(t, len(counts), 50, "distinct colours")
	// The latency bar is drawn in solid colours, as wide as each part of
	// voice to voice on the path, and its legend has a swatch of each: the
	// last reply was speculated, so the path is the endpointing wait and
	// a period of playback queueing, and the ASR, first-token and
	// first-audio colours are their legend swatches alone.
	legend := counts[color.RGBA(app.StageColors[1])]
	assert.Positive(t, legend, "the legend names every stage's colour")
	for _, i := range []int{2, 3} {
		assert.Equal(t, legend, counts[color.RGBA(app.StageColors[i])], "off the path: legend only (segment %d)", i)
	}
	assert.Greater(t, counts[color.RGBA(app.StageColors[0])], 50*legend, "the endpointing wait fills the bar")
}

// buildApp builds the app into dir and returns the binary's path.
func buildApp(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "voice-assistant")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// Under the locale of containers and services (C.UTF-8), fyne found no
// language in it and said so as it started: "Fyne error: Error parsing
// user locale C".
func TestStartsQuietlyUnderTheCLocale(t *testing.T) {
	bin := buildApp(t, t.TempDir())
	for _, tc := range []struct{ name, lang string }{{"C.UTF-8", "C.UTF-8"}, {"C", "C"}, {"POSIX", "POSIX"}, {"unset", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, "--help")
			cmd.Env = append(os.Environ(), "LC_ALL=", "LC_MESSAGES=", "LANGUAGE=", "LANG="+tc.lang)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.NotContains(t, string(out), "Fyne error")
		})
	}
}

// Without a display fyne panicked as the window opened, with a trace and
// exit status 2; the app says what to do instead, in one line, and what
// needs no display (--help) still works.
func TestWithoutADisplay(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only X11 and Wayland are found through the environment")
	}
	dir := t.TempDir()
	bin := buildApp(t, dir)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DISPLAY=") && !strings.HasPrefix(kv, "WAYLAND_DISPLAY=") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "XDG_DATA_HOME="+filepath.Join(dir, "data"))

	cmd := exec.Command(bin)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "%s", out)
	assert.Equal(t, 1, exit.ExitCode(), "%s", out)
	assert.Equal(t, "voice-assistant: no display (DISPLAY and WAYLAND_DISPLAY are unset): run it in a desktop session, "+
		"under a virtual X server (xvfb-run -a voice-assistant ...), or use the headless `voice-agent run`\n", string(out))
	assert.NotContains(t, string(out), "panic")
	assert.NotContains(t, string(out), "goroutine")

	cmd = exec.Command(bin, "--help")
	cmd.Env = env
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "--replay")
}

// colorCounts counts an image's pixels by colour.
func colorCounts(img image.Image) map[color.RGBA]int {
	counts := map[color.RGBA]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			counts[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
		}
	}
	return counts
}

func TestCommandRejectsBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing replay file", []string{"--replay", "/nonexistent.wav"}, "nonexistent.wav"},
		{"stray argument", []string{"extra"}, "unknown command"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := command()
			cmd.SetArgs(tc.args)
			err := cmd.Execute()
			require.Error(t, err)
			assert.True(t, strings.Contains(err.Error(), tc.want), err.Error())
		})
	}
}

// --backend is voice-agent's name for the audio backend; the old
// --audio-backend still sets it.
func TestBackendFlagMatchesVoiceAgent(t *testing.T) {
	for _, arg := range []string{"--backend", "--audio-backend"} {
		cmd := command()
		require.NoError(t, cmd.Flags().Parse([]string{arg, "null"}))
		assert.Equal(t, "null", cmd.Flags().Lookup("backend").Value.String(), arg)
	}
}
