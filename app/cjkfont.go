package app

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"github.com/go-text/typesetting/font"
)

// Chinese text (and other CJK) in the window.
//
// fyne's bundled font (Noto Sans) has no CJK glyphs. fyne 2.7 falls back,
// glyph by glyph, to fonts it indexes itself in the usual font folders
// (go-text's fontscan), which finds a CJK font where one is installed but
// not which one fontconfig would choose for Chinese: with Noto Sans CJK, a
// collection of the Japanese, Korean and Chinese faces, it may draw
// Chinese with Japanese glyph forms, and it misses fonts that only
// fontconfig's configuration points to. So the window asks fontconfig for
// its Simplified Chinese font and puts that in front of fyne's fonts.
//
// fyne's theme has one font per text style, and fyne tries the theme's
// font first and its own font second for every character. A theme font
// that covered Latin would draw all text with it; so the theme's font is
// the CJK face with its character map cut down to the CJK blocks (and
// the spaces, see cjkBlocks), and Latin, digits and punctuation still
// come from fyne's own font, as before. Its line metrics are set to
// fyne's font's, which is what sizes every line. The cut-down font is a
// single face even where fontconfig names a face of a collection (.ttc,
// as Debian's CJK fonts are), which fyne's theme fonts cannot be.
//
// Where fontconfig finds no CJK font (or there is no fontconfig: macOS,
// Windows), nothing is bundled: fyne's own fallback to the system's fonts
// is what is left, and without any CJK font Chinese is drawn as boxes.
// scripts/setup installs fonts-wqy-microhei on Debian.

// FontFile is one face of a font file; Index picks it in a collection.
type FontFile struct {
	Path  string
	Index int
}

// cjkSample are characters a font must have to draw Chinese.
const cjkSample = "天气你好，。"

// FontconfigCJK is the font fontconfig draws Simplified Chinese with
// (`fc-match :lang=zh-cn`), provided it has Chinese glyphs: fc-match
// answers with its best font even where none has them. It asks
// fontconfig once per process.
func FontconfigCJK() (FontFile, error) { return fontconfigCJK() }

var fontconfigCJK = sync.OnceValues(func() (FontFile, error) {
	// zh-cn, not zh: fontconfig knows the language by region, and for
	// a bare zh matches its default font whatever it covers.
	out, err := exec.Command("fc-match", "-f", "%{file}\n%{index}\n", ":lang=zh-cn").Output()
	if err != nil {
		return FontFile{}, fmt.Errorf("fc-match: %w", err)
	}
	lines := strings.Split(string(out), "\n")
	if len(lines) < 2 || lines[0] == "" {
		return FontFile{}, fmt.Errorf("fc-match found no font (%q)", out)
	}
	index, err := strconv.Atoi(strings.TrimSpace(lines[1]))
	if err != nil {
		index = 0
	}
	f := FontFile{Path: lines[0], Index: index}
	data, err := os.ReadFile(f.Path)
	if err != nil {
		return FontFile{}, err
	}
	if err := hasRunes(data, f.Index, cjkSample); err != nil {
		return FontFile{}, fmt.Errorf("fontconfig's font for Chinese, %s: %w", filepath.Base(f.Path), err)
	}
	return f, nil
})

// hasRunes says whether face index of the font data has glyphs for all of
// s.
func hasRunes(data []byte, index int, s string) error {
	faces, err := font.ParseTTC(bytes.NewReader(data))
	if err != nil {
		return err
	}
	if index < 0 || index >= len(faces) {
		return fmt.Errorf("no face %d (the file has %d)", index, len(faces))
	}
	for _, r := range s {
		if _, ok := faces[index].NominalGlyph(r); !ok {
			return fmt.Errorf("no glyph for %q", r)
		}
	}
	return nil
}

// cjkTheme is base with CJK text drawn in its own font (see above).
type cjkTheme struct {
	fyne.Theme
	cjk fyne.Resource
}

func (t *cjkTheme) Font(s fyne.TextStyle) fyne.Resource {
	if s.Symbol || s.Monospace {
		// Icons; and code, whose spaces must stay as wide as its letters
		// (the window has none).
		return t.Theme.Font(s)
	}
	// One weight for every style: fyne does not embolden a font, so bold
	// Chinese is drawn regular (the bold text here is English anyway),
	// and no CJK font has italics.
	return t.cjk
}

// withCJK is base with CJK text drawn in the font find returns; base
// itself where there is none, said once on the log.
func withCJK(base fyne.Theme, find func() (FontFile, error)) fyne.Theme {
	if t, ok := base.(*cjkTheme); ok {
		base = t.Theme
	}
	f, err := find()
	var res fyne.Resource
	if err == nil {
		res, err = cjkResource(f)
	}
	if err != nil {
		warnNoCJK.Do(func() {
			log.Printf("voice-assistant: no font for Chinese text (%v); it will be drawn as boxes unless the system has one fyne finds itself (Debian: apt install fonts-wqy-microhei)", err)
		})
		return base
	}
	return &cjkTheme{Theme: base, cjk: res}
}

var warnNoCJK sync.Once

// cjkResources caches cjkResource's fonts (a few MB each) by file.
var cjkResources sync.Map // FontFile → fyne.Resource

// cjkResource is face f cut down to the CJK blocks, as a fyne resource.
func cjkResource(f FontFile) (fyne.Resource, error) {
	if r, ok := cjkResources.Load(f); ok {
		return r.(fyne.Resource), nil
	}
	data, err := os.ReadFile(f.Path)
	if err != nil {
		return nil, err
	}
	// The line metrics of fyne's own font: the CJK font has the space
	// (see cjkBlocks), and fyne sizes every line, Latin too, by the
	// font of the space.
	line, err := metricsOf(theme.DefaultTextFont().Content())
	if err != nil {
		return nil, fmt.Errorf("fyne's font: %w", err)
	}
	sub, err := subsetCmap(data, f.Index, cjkBlocks, &line)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	// fyne loads theme fonts with a plain TTF parser and has no way back
	// from one that fails: check here.
	face, err := font.ParseTTF(bytes.NewReader(sub))
	if err != nil {
		return nil, fmt.Errorf("%s: the cut-down font does not load: %w", f.Path, err)
	}
	for _, r := range cjkSample {
		if _, ok := face.NominalGlyph(r); !ok {
			return nil, fmt.Errorf("%s: no glyph for %q", f.Path, r)
		}
	}
	name := strings.TrimSuffix(filepath.Base(f.Path), filepath.Ext(f.Path)) + "-cjk.ttf"
	res := fyne.NewStaticResource(name, sub)
	r, _ := cjkResources.LoadOrStore(f, res)
	return r.(fyne.Resource), nil
}

// cjkBlocks are the Unicode blocks drawn with the CJK font: radicals,
// CJK symbols and punctuation (、。「」), kana, bopomofo, Hangul, the
// ideographs and their extensions, vertical and compatibility forms, and
// the full-width forms (，！？：).
//
// And the spaces and invisible characters: text is split into runs by
// font at its visible characters only (go-text's shaping), so a space
// between two Chinese characters is drawn with the CJK font, as a box
// were it not there.
var cjkBlocks = [][2]rune{
	{0x20, 0x20},
	{0xa0, 0xa0},
	{0x1100, 0x11ff},
	{0x2000, 0x200f},
	{0x202f, 0x202f},
	{0x205f, 0x206f},
	{0x2e80, 0x2fdf},
	{0x2ff0, 0x4dbf},
	{0x4e00, 0x9fff},
	{0xa960, 0xa97f},
	{0xac00, 0xd7ff},
	{0xf900, 0xfaff},
	{0xfe00, 0xfe1f},
	{0xfe30, 0xfe4f},
	{0xfeff, 0xfeff},
	{0xff00, 0xffef},
	{0x20000, 0x3134f},
}

// lineMetrics are a font's ascender, descender (negative) and line gap,
// in ems.
type lineMetrics struct{ ascender, descender, gap float64 }

// metricsOf are the line metrics go-text (and so fyne) uses for the font
// data.
func metricsOf(data []byte) (lineMetrics, error) {
	f, err := font.ParseTTF(bytes.NewReader(data))
	if err != nil {
		return lineMetrics{}, err
	}
	ext, ok := f.FontHExtents()
	if !ok {
		return lineMetrics{}, errors.New("no line metrics")
	}
	em := float64(f.Upem())
	return lineMetrics{float64(ext.Ascender) / em, float64(ext.Descender) / em, float64(ext.LineGap) / em}, nil
}

// subsetCmap returns face index of the font data (a font or a
// collection) as a font of its own whose character map holds only the
// characters in blocks (ranges, first and last, in order), and, unless
// line is nil, with those line metrics. The glyphs and the other tables
// are as they were (a collection's face keeps the tables it shares).
func subsetCmap(data []byte, index int, blocks [][2]rune, line *lineMetrics) ([]byte, error) {
	faces, err := font.ParseTTC(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if index < 0 || index >= len(faces) {
		return nil, fmt.Errorf("no face %d (the file has %d)", index, len(faces))
	}
	cmap := faces[index].Cmap
	var groups [][3]uint32 // first, last character, first glyph
	for _, b := range blocks {
		for r := b[0]; r <= b[1]; r++ {
			g, ok := cmap.Lookup(r)
			if !ok || g == 0 {
				continue
			}
			if n := len(groups); n > 0 {
				last := &groups[n-1]
				if uint32(r) == last[1]+1 && uint32(g) == last[2]+uint32(r)-last[0] {
					last[1] = uint32(r)
					continue
				}
			}
			groups = append(groups, [3]uint32{uint32(r), uint32(r), uint32(g)})
		}
	}
	if len(groups) == 0 {
		return nil, errors.New("no glyphs in the blocks kept")
	}
	em := float64(faces[index].Upem())
	return rewriteTables(data, index, func(tag string, body []byte) ([]byte, error) {
		switch {
		case tag == "cmap":
			return cmapFormat12(groups), nil
		case line == nil:
		case tag == "hhea" && len(body) >= 10:
			body = append([]byte(nil), body...)
			for i, v := range []float64{line.ascender, line.descender, line.gap} {
				binary.BigEndian.PutUint16(body[4+2*i:], uint16(int16(math.Round(v*em))))
			}
		case tag == "OS/2" && len(body) >= 64:
			// The metrics are hhea's alone: not USE_TYPO_METRICS.
			body = append([]byte(nil), body...)
			body[63] &^= 1 << 7
		}
		return body, nil
	})
}

// cmapFormat12 is a cmap table with one subtable, Windows UCS-4 in
// format 12 (segmented coverage), mapping groups.
func cmapFormat12(groups [][3]uint32) []byte {
	sub := binary.BigEndian.AppendUint16(nil, 12)
	sub = binary.BigEndian.AppendUint16(sub, 0)
	sub = binary.BigEndian.AppendUint32(sub, uint32(16+12*len(groups)))
	sub = binary.BigEndian.AppendUint32(sub, 0) // language
	sub = binary.BigEndian.AppendUint32(sub, uint32(len(groups)))
	for _, g := range groups {
		for _, v := range g {
			sub = binary.BigEndian.AppendUint32(sub, v)
		}
	}
	t := binary.BigEndian.AppendUint16(nil, 0) // version
	t = binary.BigEndian.AppendUint16(t, 1)    // subtables
	t = binary.BigEndian.AppendUint16(t, 3)    // Windows
	t = binary.BigEndian.AppendUint16(t, 10)   // UCS-4
	t = binary.BigEndian.AppendUint32(t, 12)   // offset
	return append(t, sub...)
}

// rewriteTables returns face index of the sfnt data (a font or a
// TrueType collection) as a single font, each of its tables as edit
// returns it.
func rewriteTables(data []byte, index int, edit func(tag string, body []byte) ([]byte, error)) ([]byte, error) {
	short := errors.New("font file cut short")
	dir := 0
	if len(data) >= 12 && string(data[:4]) == "ttcf" {
		n := int(binary.BigEndian.Uint32(data[8:]))
		if index >= n || len(data) < 12+4*n {
			return nil, short
		}
		dir = int(binary.BigEndian.Uint32(data[12+4*index:]))
	} else if index != 0 {
		return nil, fmt.Errorf("no face %d in a single font", index)
	}
	if len(data) < dir+12 {
		return nil, short
	}
	numTables := int(binary.BigEndian.Uint16(data[dir+4:]))
	if len(data) < dir+12+16*numTables {
		return nil, short
	}
	type rec struct {
		tag  string
		body []byte
	}
	recs := make([]rec, numTables)
	for i := range recs {
		r := data[dir+12+16*i:]
		off, n := int(binary.BigEndian.Uint32(r[8:])), int(binary.BigEndian.Uint32(r[12:]))
		if off < 0 || n < 0 || off+n > len(data) {
			return nil, short
		}
		tag := string(r[:4])
		body, err := edit(tag, data[off:off+n])
		if err != nil {
			return nil, err
		}
		recs[i] = rec{tag, body}
	}
	// The header: the face's own version, and the binary-search figures
	// for its table count.
	out := append([]byte(nil), data[dir:dir+4]...)
	out = binary.BigEndian.AppendUint16(out, uint16(numTables))
	pow, log2 := 1, 0
	for pow*2 <= numTables {
		pow, log2 = pow*2, log2+1
	}
	out = binary.BigEndian.AppendUint16(out, uint16(16*pow))
	out = binary.BigEndian.AppendUint16(out, uint16(log2))
	out = binary.BigEndian.AppendUint16(out, uint16(16*(numTables-pow)))
	off := len(out) + 16*numTables
	for _, r := range recs {
		out = append(out, r.tag...)
		out = binary.BigEndian.AppendUint32(out, checksum(r.body))
		out = binary.BigEndian.AppendUint32(out, uint32(off))
		out = binary.BigEndian.AppendUint32(out, uint32(len(r.body)))
		off += (len(r.body) + 3) &^ 3
	}
	for _, r := range recs {
		out = append(out, r.body...)
		out = append(out, make([]byte, (4-len(r.body)%4)%4)...)
	}
	return out, nil
}

// checksum is an sfnt table's checksum: its big-endian words summed.
func checksum(b []byte) uint32 {
	var sum uint32
	for i := 0; i < len(b); i += 4 {
		var w [4]byte
		copy(w[:], b[i:])
		sum += binary.BigEndian.Uint32(w[:])
	}
	return sum
}
