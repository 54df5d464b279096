package assets

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
)

// validatorPath is where the validator of part's bytes is kept.
func validatorPath(part string) string { return part + ".meta" }

// partMeta is the content of validatorPath.
type partMeta struct {
	// Validator is the first response's validator (see validator).
	Validator string `json:"validator"`
	// Total is the size the first response gave the whole file, 0 if it
	// gave none: a server that keeps a file's ETag when its content
	// changes answers a resume with the new file's length, which must not
	// be spliced onto the old one's bytes.
	Total int64 `json:"total,omitempty"`
}

// validator is what an If-Range can carry to ask for the rest of the
// file a response was: its strong ETag, else its Last-Modified date (a
// weak ETag never matches in If-Range, RFC 9110 section 13.1.5); "" for
// none.
func validator(h http.Header) string {
	if etag := h.Get("ETag"); etag != "" && !strings.HasPrefix(etag, "W/") {
		return etag
	}
	return h.Get("Last-Modified")
}

// readMeta returns what is known of part's bytes; a zero partMeta if
// nothing can be read, so that part is not resumed.
func readMeta(part string) partMeta {
	b, err := os.ReadFile(validatorPath(part))
	if err != nil {
		return partMeta{}
	}
	var meta partMeta
	if json.Unmarshal(b, &meta) != nil {
		return partMeta{}
	}
	return meta
}

// writeMeta keeps meta for the bytes part is about to receive from zero,
// before the first of them: an older validator would let a resume splice
// another version of the file onto them. Without a validator, nothing
// is kept: part cannot be resumed.
func writeMeta(part string, meta partMeta) error {
	if meta.Validator == "" {
		if err := os.Remove(validatorPath(part)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	b, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	return os.WriteFile(validatorPath(part), b, 0o666) // less the umask
}

// contentRange parses "bytes START-END/TOTAL": total is -1 where it is
// "*" (unknown).
func contentRange(h string) (start, total int64, ok bool) {
	s, ok := strings.CutPrefix(h, "bytes ")
	if !ok {
		return 0, 0, false
	}
	first, rest, ok := strings.Cut(s, "-")
	if !ok {
		return 0, 0, false
	}
	_, size, ok := strings.Cut(rest, "/")
	if !ok {
		return 0, 0, false
	}
	start, err := strconv.ParseInt(first, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	if size == "*" {
		return start, -1, true
	}
	total, err = strconv.ParseInt(size, 10, 64)
	return start, total, err == nil
}
