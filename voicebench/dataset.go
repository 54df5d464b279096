// Package voicebench replays the VoiceBench benchmark through the voice
// pipeline: it reads the dataset (the published Parquet shards or a plain
// JSONL + WAV directory), runs every sample's audio (or, in text mode, its
// prompt) through the stages on a virtual clock with parallel workers, and
// appends each answer to OUT/SUBSET.jsonl in VoiceBench's own format, so
// an interrupted run resumes where it stopped.
package voicebench

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/voiceassistant/voice/audio"
)

// AudioColumn is the column (Parquet) or field (JSONL) holding the audio.
const AudioColumn = "audio"

// Sample is one benchmark item.
type Sample struct {
	// ID identifies the sample across runs: the dataset's id or key field
	// if it has one, else the row's position; Parquet samples are prefixed
	// with their split ("usa/12"), because sd-qa asks the same questions in
	// every region's split.
	ID string
	// Fields are every non-audio column, as the dataset gives them.
	Fields map[string]any

	audio     []byte // Parquet: the encoded audio
	audioPath string // directory form: the WAV file
	audioErr  error  // why the record's audio field is unusable
}

// Prompt is the sample's text prompt ("" if it has none).
func (s Sample) Prompt() string {
	p, _ := s.Fields["prompt"].(string)
	return p
}

// PCM decodes the sample's audio as 16 kHz mono, whatever its rate and
// channel count, within the audio package's input limits.
func (s Sample) PCM(ctx context.Context) ([]float32, error) {
	if s.audioErr != nil {
		return nil, s.audioErr
	}
	if s.audioPath != "" {
		return audio.ReadWAVMono16k(ctx, s.audioPath)
	}
	pcm, err := audio.DecodeWAVMono16k(bytes.NewReader(s.audio), "from the "+AudioColumn+" column")
	if codec := otherCodec(s.audio); err != nil && codec != "" {
		err = fmt.Errorf("the audio is %s; only WAV is decoded here (convert the shard's audio to WAV): %w", codec, err)
	}
	return pcm, err
}

// Dataset is one subset of the benchmark, opened for reading.
type Dataset struct {
	jsonl  string         // the directory form's SUBSET.jsonl
	shards []parquetShard // or the Parquet shards, split by split
}

type parquetShard struct {
	split string
	path  string
	file  *os.File
	pq    *parquet.File
}

// shardName is the Hugging Face layout: SUBSET/SPLIT-00000-of-00001.parquet.
var shardName = regexp.MustCompile(`^(.+)-(\d+)-of-(\d+)\.parquet$`)

// Open opens subset in dir: dir/SUBSET.jsonl with WAV files (paths in its
// audio field are relative to dir), or the Parquet shards in dir/SUBSET/.
// split selects one Parquet split ("" reads them all). Every shard's footer
// is read here, so a corrupt or missing shard fails before anything runs.
func Open(dir, subset, split string) (*Dataset, error) {
	if subset == "" || strings.ContainsAny(subset, `/\`) || subset == "." || subset == ".." {
		return nil, fmt.Errorf("voicebench: bad subset name %q", subset)
	}
	jsonl := filepath.Join(dir, subset+".jsonl")
	shardDir := filepath.Join(dir, subset)
	_, jsonlErr := os.Stat(jsonl)
	// The directory form may keep its WAV files in SUBSET/, so only
	// Parquet shards there make the subset's form ambiguous.
	shards, _ := filepath.Glob(filepath.Join(shardDir, "*.parquet"))
	hasShards := len(shards) > 0
	switch {
	case jsonlErr == nil && hasShards:
		return nil, fmt.Errorf("voicebench: both %s and Parquet shards in %s exist; keep one form of subset %q", jsonl, shardDir, subset)
	case jsonlErr == nil:
		if split != "" {
			return nil, fmt.Errorf("voicebench: %s has no splits (--split is for Parquet shards)", jsonl)
		}
		return &Dataset{jsonl: jsonl}, nil
	case hasShards:
		return openParquet(shardDir, subset, split)
	}
	avail, err := subsets(dir)
	if err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("voicebench: unknown subset %q in %s (available: %s)", subset, dir, strings.Join(avail, ", "))
}

// subsets lists the subsets in dir, in either form.
func subsets(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("voicebench: %w", err)
	}
	var names []string
	for _, e := range entries {
		name, isJSONL := strings.CutSuffix(e.Name(), ".jsonl")
		switch {
		case isJSONL && !e.IsDir():
			names = append(names, name)
		case e.IsDir():
			if shards, _ := filepath.Glob(filepath.Join(dir, e.Name(), "*.parquet")); len(shards) > 0 {
				names = append(names, e.Name())
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

func openParquet(dir, subset, split string) (*Dataset, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("voicebench: %w", err)
	}
	type shardSet struct {
		of    int
		paths map[int]string
	}
	splits := map[string]*shardSet{}
	for _, e := range entries {
		m := shardName.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		of, _ := strconv.Atoi(m[3])
		set := splits[m[1]]
		if set == nil {
			set = &shardSet{of: of, paths: map[int]string{}}
			splits[m[1]] = set
		}
		if of != set.of || n >= of {
			return nil, fmt.Errorf("voicebench: %s: split %q has shards that disagree on their number (%s)", dir, m[1], e.Name())
		}
		set.paths[n] = filepath.Join(dir, e.Name())
	}
	names := slices.Sorted(maps.Keys(splits))
	if len(names) == 0 {
		return nil, fmt.Errorf("voicebench: %s: no SPLIT-NNNNN-of-NNNNN.parquet shards", dir)
	}
	if split != "" {
		if splits[split] == nil {
			return nil, fmt.Errorf("voicebench: subset %q has no split %q (available: %s)", subset, split, strings.Join(names, ", "))
		}
		names = []string{split}
	}
	ds := &Dataset{}
	for _, name := range names {
		set := splits[name]
		for i := range set.of {
			path, ok := set.paths[i]
			if !ok {
				return nil, errors.Join(fmt.Errorf("voicebench: %s: split %q lacks shard %d of %d", dir, name, i, set.of), ds.Close())
			}
			shard, err := openShard(name, path)
			if err != nil {
				return nil, errors.Join(err, ds.Close())
			}
			ds.shards = append(ds.shards, shard)
		}
	}
	return ds, nil
}

func openShard(split, path string) (parquetShard, error) {
	f, err := os.Open(path)
	if err != nil {
		return parquetShard{}, fmt.Errorf("voicebench: %w", err)
	}
	st, err := f.Stat()
	if err == nil {
		var pq *parquet.File
		if pq, err = parquetFile(f, st.Size()); err == nil {
			return parquetShard{split: split, path: path, file: f, pq: pq}, nil
		}
	}
	return parquetShard{}, errors.Join(fmt.Errorf("voicebench: %s: %w", path, err), f.Close())
}

// parquetFile reads the footer of a Parquet file of size bytes, guarding
// the decoder against what a damaged file claims.
func parquetFile(r io.ReaderAt, size int64) (pq *parquet.File, err error) {
	if err := checkFooter(r, size); err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			pq, err = nil, fmt.Errorf("corrupt Parquet file: %v", p)
		}
	}()
	return parquet.OpenFile(r, size)
}

// checkFooter checks the footer length a Parquet file ends with against
// its size: the decoder allocates whatever a damaged file claims (half a
// gigabyte for a few stray bytes) before noticing.
func checkFooter(r io.ReaderAt, size int64) error {
	const magic = "PAR1"
	var tail [8]byte
	if size < 12 {
		return fmt.Errorf("not a Parquet file (%d bytes)", size)
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return err
	}
	if string(tail[4:]) != magic {
		return errors.New("not a Parquet file (no PAR1 at the end)")
	}
	if n := int64(binary.LittleEndian.Uint32(tail[:4])); n > size-12 {
		return fmt.Errorf("corrupt Parquet file: footer of %d bytes in a file of %d", n, size)
	}
	return nil
}

// Close releases the shard files.
func (d *Dataset) Close() error {
	var errs []error
	for _, s := range d.shards {
		errs = append(errs, s.file.Close())
	}
	d.shards = nil
	return errors.Join(errs...)
}

// HasAudio reports whether the Parquet shards have an audio column (JSONL
// samples are checked one by one).
func (d *Dataset) HasAudio() bool {
	for _, s := range d.shards {
		if !slices.ContainsFunc(s.pq.Schema().Fields(), func(f parquet.Field) bool { return f.Name() == AudioColumn }) {
			return false
		}
	}
	return true
}

// All yields the samples in order. A read error ends the sequence with
// that error; the samples before it are good.
func (d *Dataset) All() iter.Seq2[Sample, error] {
	if d.jsonl != "" {
		return d.jsonlSamples
	}
	return d.parquetSamples
}

func (d *Dataset) jsonlSamples(yield func(Sample, error) bool) {
	f, err := os.Open(d.jsonl)
	if err != nil {
		yield(Sample{}, fmt.Errorf("voicebench: %w", err))
		return
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	// Numbers stay as written (a key of 1001 is not re-encoded as 1001.0).
	dec.UseNumber()
	base := filepath.Dir(d.jsonl)
	for index := 0; ; index++ {
		var fields map[string]any
		if err := dec.Decode(&fields); err == io.EOF {
			return
		} else if err != nil {
			yield(Sample{}, fmt.Errorf("voicebench: %s: record %d: %w", d.jsonl, index+1, err))
			return
		}
		s := newSample("", index, fields)
		path, err := audioPath(fields[AudioColumn])
		delete(s.Fields, AudioColumn)
		if !filepath.IsAbs(path) {
			path = filepath.Join(base, path)
		}
		s.audioPath, s.audioErr = path, err
		if !yield(s, nil) {
			return
		}
	}
}

// audioPath reads the directory form's audio field: a path, or an object
// with a path (as Hugging Face exports write it).
func audioPath(v any) (string, error) {
	switch a := v.(type) {
	case nil:
		return "", fmt.Errorf("no %q field", AudioColumn)
	case string:
		return a, nil
	case map[string]any:
		if p, ok := a["path"].(string); ok && p != "" {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q must be a WAV path or {\"path\": ...}, not %v", AudioColumn, v)
}

func (d *Dataset) parquetSamples(yield func(Sample, error) bool) {
	index := map[string]int{} // row position within each split
	for _, shard := range d.shards {
		for row, err := range readRows(shard) {
			if err != nil {
				yield(Sample{}, err)
				return
			}
			s := newSample(shard.split, index[shard.split], row)
			index[shard.split]++
			s.audio = audioBytes(row[AudioColumn])
			delete(s.Fields, AudioColumn)
			if !yield(s, nil) {
				return
			}
		}
	}
}

// readRows reads a shard one row at a time (a shard holds hundreds of
// megabytes of audio), each row as column name -> value with structs as
// maps and lists as slices, whatever the schema.
func readRows(shard parquetShard) iter.Seq2[map[string]any, error] {
	return func(yield func(map[string]any, error) bool) {
		r := parquet.NewGenericReader[map[string]any](shard.pq, shard.pq.Schema())
		defer r.Close()
		for {
			rows := []map[string]any{{}}
			n, err := readGuarded(r, rows)
			if n == 1 && !yield(rows[0], nil) {
				return
			}
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(nil, fmt.Errorf("voicebench: %s: %w", shard.path, err))
				return
			}
		}
	}
}

// readGuarded turns a panic inside the Parquet decoder (it trusts some
// lengths in damaged pages) into an error for the shard.
func readGuarded(r *parquet.GenericReader[map[string]any], rows []map[string]any) (n int, err error) {
	defer func() {
		if p := recover(); p != nil {
			n, err = 0, fmt.Errorf("corrupt data: %v", p)
		}
	}()
	return r.Read(rows)
}

// otherCodec names the encoding of audio that Hugging Face may store
// instead of WAV, from its magic bytes ("" if none of them).
func otherCodec(b []byte) string {
	for _, c := range []struct{ magic, name string }{{"fLaC", "FLAC"}, {"OggS", "Ogg"}, {"ID3", "MP3"}, {"\xff\xfb", "MP3"}, {"\xff\xf3", "MP3"}} {
		if bytes.HasPrefix(b, []byte(c.magic)) {
			return c.name
		}
	}
	return ""
}

// audioBytes is the encoded audio of a Hugging Face Audio value, a struct
// {bytes, path}, or of a plain binary column.
func audioBytes(v any) []byte {
	if m, ok := v.(map[string]any); ok {
		v = m["bytes"]
	}
	switch b := v.(type) {
	case []byte:
		return b
	case string:
		return []byte(b)
	}
	return nil
}

func newSample(split string, index int, fields map[string]any) Sample {
	id := strconv.Itoa(index)
	for _, name := range []string{"id", "key"} {
		if v, ok := fields[name]; ok && v != nil {
			id = fmt.Sprint(v)
			break
		}
	}
	if split != "" {
		id = split + "/" + id
	}
	return Sample{ID: id, Fields: fields}
}
