package derived

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// SealFile records, beside the derived files, what they were when made.
const SealFile = "seal"

// An engine maps its derived files and trusts them as they are: a file
// zeroed, truncated or replaced since (a crash before the page cache was
// written back, a full disk, another program) is read as weights, wrong
// and silently (a zero-filled ONNX Runtime copy turned Smart Turn's 0.50
// into 0.66). So each file's size and a sampled sha256 are sealed once it
// is made and checked at every load. Sampling 4 KiB of every MiB reads a
// 1 GiB file in about a millisecond a hundred MiB, and catches any damage
// of a MiB or more, or to a file's length.
const (
	sampleBytes  = 4 << 10
	sampleStride = 1 << 20
)

// ErrUnsealed is Verify's error for files never sealed (made by an older
// agent, or by a derivation that did not finish).
var ErrUnsealed = errors.New("never sealed")

// Seal syncs the named files in dir to disk and records their sizes and
// sampled sums, the record itself written under a temporary name and
// renamed into place, so that it exists only once the files are whole.
func Seal(dir string, names ...string) error {
	var b strings.Builder
	for _, name := range names {
		size, sum, err := sample(filepath.Join(dir, name), true)
		if err != nil {
			return fmt.Errorf("seal %s: %w", name, err)
		}
		fmt.Fprintf(&b, "%s %d %s\n", name, size, sum)
	}
	return WriteFile(filepath.Join(dir, SealFile), func(w io.Writer) error {
		_, err := io.WriteString(w, b.String())
		return err
	})
}

// Verify returns an error naming the first sealed file in dir that is
// not what was sealed, ErrUnsealed if nothing was.
func Verify(dir string) error {
	f, err := os.Open(filepath.Join(dir, SealFile))
	if errors.Is(err, os.ErrNotExist) {
		return ErrUnsealed
	}
	if err != nil {
		return err
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		fields := strings.Fields(lines.Text())
		if len(fields) != 3 {
			return fmt.Errorf("%s: a damaged record: %q", SealFile, lines.Text())
		}
		name, sum := fields[0], fields[2]
		want, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			return fmt.Errorf("%s: a damaged record: %q", SealFile, lines.Text())
		}
		size, got, err := sample(filepath.Join(dir, name), false)
		switch {
		case err != nil:
			return fmt.Errorf("%s: %w", name, err)
		case size != want:
			return fmt.Errorf("%s: %d bytes, sealed at %d", name, size, want)
		case got != sum:
			return fmt.Errorf("%s: its content changed since it was made", name)
		}
	}
	return lines.Err()
}

// sample returns the size of the regular file at path (not followed
// through a symlink: a derived file is the agent's own) and the sha256 of
// its size and of sampleBytes at every sampleStride, syncing it first if
// asked.
func sample(path string, sync bool) (int64, string, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return 0, "", err
	}
	if !info.Mode().IsRegular() {
		return 0, "", fmt.Errorf("not a regular file (%s)", info.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	if sync {
		if err := f.Sync(); err != nil {
			return 0, "", err
		}
	}
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00", info.Size())
	buf := make([]byte, sampleBytes)
	for off := int64(0); off < info.Size(); off += sampleStride {
		n, err := f.ReadAt(buf, off)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, "", err
		}
		h.Write(buf[:n])
	}
	return info.Size(), hex.EncodeToString(h.Sum(nil)), nil
}

// WriteFile has write fill a file that is then renamed to path, once
// synced: a reader finds the old file or the whole new one, and a process
// that maps the old one keeps its pages.
func WriteFile(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 1<<20)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
