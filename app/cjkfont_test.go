package app

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"github.com/go-text/typesetting/font"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/testenv"
)

// fontChildEnv marks the process TestChineseBubble runs its checks in.
const fontChildEnv = "VOICE_APP_FONT_TEST_CHILD"

// A Chinese bubble is drawn with the CJK font fontconfig finds, not as
// the boxes fyne draws for a character no font has, and an English
// bubble is drawn as without it (with fyne's own font).
//
// fyne itself falls back to any installed font that has a glyph, so
// here, where scripts/setup installed one, Chinese would be drawn without
// the theme as well. The checks therefore run in a child process where
// fyne cannot index the system's fonts (it gives up on them without a
// cache directory: no HOME, no XDG_CACHE_HOME), as on a machine whose
// font folders have no CJK font; the child first checks that Chinese is
// drawn as boxes there without the theme.
func TestChineseBubble(t *testing.T) {
	if _, err := FontconfigCJK(); err != nil {
		testenv.Missing(t, "no CJK font: "+err.Error()+" (Debian: fonts-wqy-microhei)")
	}
	if os.Getenv(fontChildEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChineseBubble$", "-test.count=1", "-test.v")
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_CACHE_HOME=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, fontChildEnv+"=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "the checks, in a child process:\n%s", out)
		require.Contains(t, string(out), "--- PASS: TestChineseBubble", "%s", out)
		return
	}

	const chinese = "今天天气怎么样？北京晴，气温二十五度。"
	const english = "It is sunny and warm today."
	tofu := strings.Repeat("\U000F0001", len([]rune(chinese))) // in no font

	// Without a CJK font: the window as before.
	plain := newTestUI(t, Options{CJKFont: func() (FontFile, error) { return FontFile{}, errors.New("none, for the test") }})
	_, themed := plain.app.Settings().Theme().(*cjkTheme)
	require.False(t, themed)
	plainEnglish, _ := drawBubble(t, Assistant, english)
	require.True(t, sameImage(bubbleText(t, User, tofu), bubbleText(t, User, chinese)),
		"without the CJK font Chinese should be drawn as boxes here, or this test checks nothing: does fyne reach the system's fonts without a cache directory?")

	// With fontconfig's.
	u := newTestUI(t, Options{})
	_, themed = u.app.Settings().Theme().(*cjkTheme)
	require.True(t, themed, "the window draws Chinese with fontconfig's font")
	box := bubbleText(t, User, "\U000F0001")
	for _, r := range chinese {
		assert.False(t, sameImage(box, bubbleText(t, User, string(r))), "%q is drawn as a box", r)
	}
	assert.False(t, sameImage(bubbleText(t, User, tofu), bubbleText(t, User, chinese)))
	themedEnglish, _ := drawBubble(t, Assistant, english)
	assert.True(t, sameImage(plainEnglish, themedEnglish), "English (and the bold header) is drawn with fyne's own font, as before")
}

// bubbleText is the image of text in a chat bubble, said by role.
func bubbleText(t *testing.T, role Role, text string) image.Image {
	t.Helper()
	_, img := drawBubble(t, role, text)
	return img
}

// drawBubble draws a chat bubble with text, said by role, in a window of the
// current app, and returns the window's image and that of the text.
func drawBubble(t *testing.T, role Role, text string) (window, textImg image.Image) {
	t.Helper()
	b := newBubble()
	b.show(Entry{Role: role, Text: text})
	w := test.NewWindow(container.NewVBox(b.row))
	defer w.Close()
	w.Resize(fyne.NewSize(600, 120))
	// A wrapping label's height follows its width: lay it out again at
	// the window's.
	w.Content().Refresh()
	img := w.Canvas().Capture()
	scale := float32(img.Bounds().Dx()) / w.Canvas().Size().Width
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(b.text)
	size := b.text.Size()
	r := image.Rect(int(pos.X*scale), int(pos.Y*scale), int((pos.X+size.Width)*scale), int((pos.Y+size.Height)*scale))
	require.False(t, r.Empty(), "the bubble's text is not laid out")
	require.True(t, r.In(img.Bounds()), "the bubble's text, %v, is outside the window, %v", r, img.Bounds())
	return img, img.(interface {
		SubImage(image.Rectangle) image.Image
	}).SubImage(r)
}

func sameImage(a, b image.Image) bool {
	ab, bb := a.Bounds(), b.Bounds()
	if ab.Size() != bb.Size() {
		return false
	}
	for y := 0; y < ab.Dy(); y++ {
		for x := 0; x < ab.Dx(); x++ {
			r1, g1, b1, a1 := a.At(ab.Min.X+x, ab.Min.Y+y).RGBA()
			r2, g2, b2, a2 := b.At(bb.Min.X+x, bb.Min.Y+y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 || a1 != a2 {
				return false
			}
		}
	}
	return true
}

// The cut-down font keeps the glyphs of the characters asked for and
// nothing else, from a single font or a face of a collection.
func TestSubsetCmap(t *testing.T) {
	regular, bold := theme.DefaultTextFont().Content(), theme.DefaultTextBoldFont().Content()
	upper := [][2]rune{{'A', 'Z'}}
	sub, err := subsetCmap(regular, 0, upper, nil)
	require.NoError(t, err)
	orig, err := font.ParseTTF(bytes.NewReader(regular))
	require.NoError(t, err)
	face, err := font.ParseTTF(bytes.NewReader(sub))
	require.NoError(t, err)
	for r := 'A'; r <= 'Z'; r++ {
		want, _ := orig.NominalGlyph(r)
		got, ok := face.NominalGlyph(r)
		assert.True(t, ok, "%q", r)
		assert.Equal(t, want, got, "%q", r)
	}
	for _, r := range "az 0." {
		_, ok := face.NominalGlyph(r)
		assert.False(t, ok, "%q is kept", r)
	}

	ttc := collection(regular, bold)
	fromTTC, err := subsetCmap(ttc, 1, upper, nil)
	require.NoError(t, err)
	boldSub, err := subsetCmap(bold, 0, upper, nil)
	require.NoError(t, err)
	assert.Equal(t, boldSub, fromTTC, "face 1 of the collection is the bold font")
	fromTTC, err = subsetCmap(ttc, 0, upper, nil)
	require.NoError(t, err)
	assert.Equal(t, sub, fromTTC)

	_, err = subsetCmap(ttc, 2, upper, nil)
	assert.ErrorContains(t, err, "no face 2")
	latin := filepath.Join(t.TempDir(), "latin.ttf")
	require.NoError(t, os.WriteFile(latin, regular, 0o644))
	_, err = cjkResource(FontFile{Path: latin})
	assert.ErrorContains(t, err, "no glyph for '天'", "fyne's font has no CJK")
	_, err = cjkResource(FontFile{Path: filepath.Join(t.TempDir(), "none.ttf")})
	assert.Error(t, err)
}

// collection is a TrueType collection of the fonts.
func collection(fonts ...[]byte) []byte {
	out := []byte("ttcf\x00\x01\x00\x00")
	out = binary.BigEndian.AppendUint32(out, uint32(len(fonts)))
	base := len(out) + 4*len(fonts)
	var body []byte
	for _, f := range fonts {
		out = binary.BigEndian.AppendUint32(out, uint32(base+len(body)))
		f = append([]byte(nil), f...)
		for i := range int(binary.BigEndian.Uint16(f[4:])) {
			rec := f[12+16*i+8:]
			binary.BigEndian.PutUint32(rec, binary.BigEndian.Uint32(rec)+uint32(base+len(body)))
		}
		body = append(body, f...)
		body = append(body, make([]byte, (4-len(f)%4)%4)...)
	}
	return append(out, body...)
}
