package memstat

import (
	"bytes"
	"cmp"
	"os"
	"slices"
	"strconv"
	"time"
)

// Mapping is what one mapped file, or one kind of anonymous memory,
// holds resident, summed over its mappings (a file ONNX Runtime maps once
// per session counts once per mapping, as RSS counts it).
type Mapping struct {
	// Name is the file's path, or the kernel's name for the memory
	// ("[heap]", "[stack]", "[anon: Go: heap]" where the kernel keeps the
	// names Go gives), "[anonymous]" for the rest.
	Name string `json:"name"`
	RSS  int64  `json:"rss_bytes"`
	Anon int64  `json:"anon_bytes"`
}

// Mappings reads where the process's resident memory is, by mapping, the
// largest first (Linux; none elsewhere).
func Mappings() []Mapping {
	areas, err := Areas()
	if err != nil {
		return nil
	}
	return byName(areas)
}

// Area is one mapping of the process's memory (a VMA): its addresses,
// what it maps, and what of it is resident.
type Area struct {
	Start, End uintptr
	// Name is as in Mapping.
	Name string
	RSS  int64
	// Anon is what is anonymous of RSS: in a private mapping of a file,
	// the pages written to since they were read.
	Anon int64
}

// Areas reads the process's mappings (Linux; an error elsewhere).
func Areas() ([]Area, error) {
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return nil, err
	}
	return parseSmaps(smaps), nil
}

func parseSmaps(smaps []byte) []Area {
	var areas []Area
	// The kernel writes smaps a read at a time, going on from the last
	// mapping it wrote: a mapping that changed between two reads (the C
	// heap growing) can be written twice. The second record stands.
	index := map[uintptr]int{}
	cur := -1 // the area whose fields follow
	for line := range bytes.Lines(smaps) {
		fields := bytes.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if !bytes.HasSuffix(fields[0], []byte(":")) {
			// A mapping's header: start-end perms offset device inode [name].
			a := Area{Name: "[anonymous]"}
			start, end, _ := bytes.Cut(fields[0], []byte("-"))
			s, err1 := strconv.ParseUint(string(start), 16, 64)
			e, err2 := strconv.ParseUint(string(end), 16, 64)
			if err1 != nil || err2 != nil {
				cur = -1
				continue
			}
			a.Start, a.End = uintptr(s), uintptr(e)
			if len(fields) > 5 {
				a.Name = string(bytes.Join(fields[5:], []byte(" ")))
			}
			var seen bool
			if cur, seen = index[a.Start]; seen {
				areas[cur] = a
			} else {
				cur = len(areas)
				index[a.Start] = cur
				areas = append(areas, a)
			}
			continue
		}
		if cur < 0 {
			continue
		}
		switch string(fields[0]) {
		case "Rss:":
			areas[cur].RSS += kbField(line, "Rss:")
		case "Anonymous:":
			areas[cur].Anon += kbField(line, "Anonymous:")
		}
	}
	return areas
}

// byName sums the areas of each name, the largest first, leaving out
// those with nothing resident.
func byName(areas []Area) []Mapping {
	sums := map[string]*Mapping{}
	for _, a := range areas {
		m := sums[a.Name]
		if m == nil {
			m = &Mapping{Name: a.Name}
			sums[a.Name] = m
		}
		m.RSS += a.RSS
		m.Anon += a.Anon
	}
	out := make([]Mapping, 0, len(sums))
	for _, m := range sums {
		if m.RSS > 0 {
			out = append(out, *m)
		}
	}
	slices.SortFunc(out, func(a, b Mapping) int {
		return cmp.Or(cmp.Compare(b.RSS, a.RSS), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// MappingsAtPeak keeps where the resident memory was (Mappings) at its
// peak: the peak's transients are gone by the time a run ends.
type MappingsAtPeak struct {
	peak atPeak[[]Mapping]
	r    procReader
}

// FollowMappings starts looking at the resident memory every interval.
func FollowMappings(interval time.Duration) *MappingsAtPeak {
	m := &MappingsAtPeak{}
	m.peak.follow(interval, func() int64 { return m.r.sample().RSS }, func() ([]Mapping, bool) {
		ms := Mappings()
		return ms, ms != nil
	})
	return m
}

// Stop ends the looking and returns the mappings at the peak and the
// resident memory then, in bytes.
func (m *MappingsAtPeak) Stop() ([]Mapping, int64) {
	defer m.r.close()
	return m.peak.stop()
}
