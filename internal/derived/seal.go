package derived

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// SealFile records, beside the derived files, what they were when made.
const SealFile = "seal"

// An engine maps its derived files and trusts them as they are: a file
// zeroed, truncated or replaced since (a crash before the page cache was
// written back, a full disk, another program) is read as weights, wrong
// and silently (one MiB of a Smart Turn copy zeroed turned 0.4961 into
// 0.5089; a damaged 4-bit copy gave NaN). So each file's size and the
// CRC-32C of its whole content are sealed once it is made, and checked at
// every load, before the engine maps it.
//
// CRC-32C guards against accidental damage (it is what Btrfs and ext4
// check their blocks with), not against a program that means to fool it:
// one that can write the cache can write the seal too. It runs in the
// CPU's own instruction on amd64 and arm64 (6 GB/s a core here against
// sha256's 0.85), and a file's 1 MiB chunks are summed on every core.
// Measured with BenchmarkVerify (x86-64 VM, 2 cores under a load of 7-10
// from other builds, so the spread; page cache warm): a GiB copy in
// 190-520 ms, 190-350 on two cores; MNN's pool, 1 GiB sparse holding 184
// MiB, in 37-73 ms, its holes not read (SEEK_DATA). That is about a fifth
// of the fp32 X-ASR set's 1.4 s load from its 1.2 GB copy, 30-50 ms for an
// int4 set's copy or pool, and it reads the pages the engine maps next.
// So every load checks its files whole before the engine maps them:
// checked in the background after the load, damaged weights would already
// be answering; sampled at fixed offsets (the earlier seal's 4 KiB a MiB),
// a MiB zeroed around a sample or noise after each passed.
//
// The seal checks itself: its last line is the CRC-32C of the lines
// before it, so an emptied, cut short or edited seal is damaged, not a
// seal of fewer files; and Verify takes the files the engine will map, so
// a file the seal does not name is unsealed.

// sealHeader opens a seal; a seal without it (made by an earlier agent,
// which sampled 4 KiB of every MiB) is not trusted.
const sealHeader = "voice-agent derived seal v2"

// sealSumPrefix starts a seal's last line.
const sealSumPrefix = "crc32c "

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrUnsealed is Verify's error for files never sealed (made by a
// derivation that did not finish).
var ErrUnsealed = errors.New("never sealed")

// Seal syncs the named files in dir to disk and records their sizes and
// content sums, the record itself written under a temporary name and
// renamed into place, so that it exists only once the files are whole.
func Seal(dir string, names ...string) error {
	var b bytes.Buffer
	b.WriteString(sealHeader + "\n")
	for _, name := range names {
		size, sum, err := digestFile(filepath.Join(dir, name), true)
		if err != nil {
			return fmt.Errorf("seal %s: %w", name, err)
		}
		fmt.Fprintf(&b, "%s %d %08x\n", strconv.Quote(name), size, sum)
	}
	fmt.Fprintf(&b, "%s%08x\n", sealSumPrefix, crc32.Checksum(b.Bytes(), castagnoli))
	return WriteFile(filepath.Join(dir, SealFile), func(w io.Writer) error {
		_, err := w.Write(b.Bytes())
		return err
	})
}

// sealed is what the seal recorded of a file.
type sealed struct {
	size int64
	sum  uint32
}

// Verify returns nil if the files named, those the engine will map from
// dir, are exactly the files sealed there and each is as it was sealed;
// otherwise an error naming the first that is not, ErrUnsealed if nothing
// was sealed.
func Verify(dir string, names ...string) error {
	seal, err := readSeal(filepath.Join(dir, SealFile))
	if err != nil {
		return err
	}
	for _, name := range names {
		if _, ok := seal[name]; !ok {
			return fmt.Errorf("%s: not sealed", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(seal)) {
		if !slices.Contains(names, name) {
			return fmt.Errorf("%s: sealed, but not one of the files mapped (%s)", name, strings.Join(names, ", "))
		}
	}
	for _, name := range names {
		want := seal[name]
		size, sum, err := digestFile(filepath.Join(dir, name), false)
		switch {
		case err != nil:
			return fmt.Errorf("%s: %w", name, err)
		case size != want.size:
			return fmt.Errorf("%s: %d bytes, sealed at %d", name, size, want.size)
		case sum != want.sum:
			return fmt.Errorf("%s: its content changed since it was made", name)
		}
	}
	return nil
}

// readSeal reads the seal at path, checking its own sum first.
func readSeal(path string) (map[string]sealed, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrUnsealed
	}
	if err != nil {
		return nil, err
	}
	damaged := func(why string) error { return fmt.Errorf("the seal is damaged (%s)", why) }
	header := []byte(sealHeader + "\n")
	body, last, ok := cutLastLine(data)
	switch {
	case len(data) == 0:
		return nil, damaged("empty")
	case !bytes.HasPrefix(data, header) && !bytes.HasPrefix(header, data):
		return nil, damaged("not a seal this agent writes")
	case !ok || !bytes.HasPrefix(body, header) || !bytes.HasPrefix(last, []byte(sealSumPrefix)):
		return nil, damaged("cut short")
	case string(last) != fmt.Sprintf("%s%08x", sealSumPrefix, crc32.Checksum(body, castagnoli)):
		return nil, damaged("its checksum does not match its lines")
	}
	seal := map[string]sealed{}
	lines := bufio.NewScanner(bytes.NewReader(body[len(sealHeader)+1:]))
	for lines.Scan() {
		name, s, err := parseSealLine(lines.Text())
		if err != nil {
			return nil, damaged(err.Error())
		}
		seal[name] = s
	}
	return seal, lines.Err()
}

// cutLastLine splits data, which ends in a newline, before its last line.
func cutLastLine(data []byte) (body, last []byte, ok bool) {
	trimmed, ok := bytes.CutSuffix(data, []byte("\n"))
	if !ok {
		return nil, nil, false
	}
	i := bytes.LastIndexByte(trimmed, '\n')
	return data[:i+1], trimmed[i+1:], i >= 0
}

// parseSealLine reads a file's line: its quoted name, size and sum.
func parseSealLine(line string) (string, sealed, error) {
	quoted, err := strconv.QuotedPrefix(line)
	if err != nil {
		return "", sealed{}, fmt.Errorf("a record without a name: %q", line)
	}
	name, _ := strconv.Unquote(quoted)
	var s sealed
	if _, err := fmt.Sscanf(line[len(quoted):], " %d %08x", &s.size, &s.sum); err != nil {
		return "", sealed{}, fmt.Errorf("%s: %w", name, err)
	}
	return name, s, nil
}

// digestFile returns the size of the regular file at path (not followed
// through a symlink: a derived file is the agent's own) and the digest of
// its content, syncing it first if asked.
func digestFile(path string, sync bool) (int64, uint32, error) {
	f, err := openRegular(path, os.O_RDONLY, 0)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	if sync {
		if err := f.Sync(); err != nil {
			return 0, 0, err
		}
	}
	sum, err := digest(f, info.Size())
	return info.Size(), sum, err
}

// WriteFile has write fill a file that is then renamed to path, once
// synced: a reader finds the old file or the whole new one, a process
// that maps the old one keeps its pages, and a symlink planted at path is
// replaced, not written through.
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
