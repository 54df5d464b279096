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

// readValidator returns the validator of part's bytes; "" if there is
// none, or none that can be read, so that part is not resumed.
func readValidator(part string) string {
	b, err := os.ReadFile(validatorPath(part))
	if err != nil {
		return ""
	}
	var meta partMeta
	if json.Unmarshal(b, &meta) != nil {
		return ""
	}
	return meta.Validator
}

// writeValidator keeps v as the validator of the bytes part is about to
// receive from zero, before the first of them: an older one would let a
// resume splice another version of the file onto them.
func writeValidator(part, v string) error {
	if v == "" {
		if err := os.Remove(validatorPath(part)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	b, err := json.Marshal(partMeta{Validator: v})
	if err != nil {
		return err
	}
	return os.WriteFile(validatorPath(part), b, 0o666) // less the umask
}

// contentRangeStart parses "bytes START-END/TOTAL".
func contentRangeStart(h string) (int64, bool) {
	s, ok := strings.CutPrefix(h, "bytes ")
	if !ok {
		return 0, false
	}
	s, _, ok = strings.Cut(s, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
