package assets

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"unicode"
)

// The manifest of every model the assistant uses: where each file comes
// from, and its size and sha256 where they are known in advance (a file
// without them is checked against what its first download recorded, once
// the downloader lands).
//
//go:embed manifest.json
var manifestJSON []byte

// Manifest lists the models.
type Manifest struct {
	Models []Model `json:"models"`
}

// Model is one model: the files that make it up, in one directory.
type Model struct {
	Name        string `json:"name"`
	Stage       string `json:"stage"`
	License     string `json:"license"`
	Description string `json:"description"`
	Notes       string `json:"notes,omitempty"`
	// Platform, when set (GOOS/GOARCH, e.g. "linux/arm64"), is the only
	// platform the model is for: a native library.
	Platform string `json:"platform,omitempty"`
	// Local is the folder under third_party/ where scripts/setup (or the
	// user) installs the model's files, and where the agent also looks.
	Local string `json:"local,omitempty"`
	// Format, when set, says that some of the model's files name the
	// others, which differ from one package to another: FormatMNNLLM, an
	// MNN LLM export, whose config.json and llm_config.json name its
	// model, weights, tokenizer and embeddings file (if it has one). Files
	// then lists those that every package has, with the sources of the
	// rest beside config.json's.
	Format string `json:"format,omitempty"`
	// ApproxSize, in bytes, is about how big the whole model is, for a
	// model some of whose files could not be downloaded to pin their
	// sizes: what is shown before a download instead of "size unknown".
	// Only pinned sizes bound and check a download.
	ApproxSize int64  `json:"approx_size,omitempty"`
	Files      []File `json:"files"`
}

// DownloadSize is how big the model's files are: the sum of their pinned
// sizes, else the model's approximate size (approx), else the sum of the
// sizes pinned, short of the rest (unknown).
func (m Model) DownloadSize() (n int64, approx, unknown bool) {
	for _, f := range m.Files {
		n += f.Size
		unknown = unknown || f.Size == 0
	}
	if unknown && m.ApproxSize > 0 {
		return m.ApproxSize, true, false
	}
	return n, false, unknown
}

// ForThisPlatform reports whether m is used on the platform this program
// runs on.
func (m Model) ForThisPlatform() bool {
	return m.Platform == "" || m.Platform == runtime.GOOS+"/"+runtime.GOARCH
}

// File is one file of a model. Size 0 and an empty SHA256 mean unknown.
type File struct {
	Path    string   `json:"path"`
	Size    int64    `json:"size,omitempty"`
	SHA256  string   `json:"sha256,omitempty"`
	Sources []string `json:"sources"`
}

// LoadManifest parses and checks the embedded manifest.
func LoadManifest() (Manifest, error) {
	return parseManifest(manifestJSON)
}

// parseManifest parses and checks a manifest.
func parseManifest(data []byte) (Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return Manifest{}, fmt.Errorf("assets: manifest: %w", err)
	}
	if err := m.validate(); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

// Model returns the model with the given name.
func (m Manifest) Model(name string) (Model, bool) {
	for _, mod := range m.Models {
		if mod.Name == name {
			return mod, true
		}
	}
	return Model{}, false
}

// validate checks what the puller relies on: a model's files land in
// <cache>/<name>/<path>, so a name is one path element and a path a
// relative slash-separated path that stays inside the model's directory.
func (m Manifest) validate() error {
	seen := map[string]bool{}
	for _, mod := range m.Models {
		if mod.Name == "" || seen[mod.Name] {
			return fmt.Errorf("assets: manifest: model name %q empty or repeated", mod.Name)
		}
		if strings.Contains(mod.Name, "/") || !localPath(mod.Name) {
			return fmt.Errorf("assets: manifest: model name %q is not a plain directory name", mod.Name)
		}
		seen[mod.Name] = true
		if len(mod.Files) == 0 {
			return fmt.Errorf("assets: manifest: model %s has no files", mod.Name)
		}
		if err := mod.validateFormat(); err != nil {
			return err
		}
		if err := mod.validateApproxSize(); err != nil {
			return err
		}
		paths := map[string]bool{}
		for _, f := range mod.Files {
			if f.Path == "" || len(f.Sources) == 0 {
				return fmt.Errorf("assets: manifest: model %s: file %q needs a path and a source", mod.Name, f.Path)
			}
			if !localPath(f.Path) {
				return fmt.Errorf("assets: manifest: model %s: file path %q is not a clean relative path inside the model's directory", mod.Name, f.Path)
			}
			if paths[f.Path] {
				return fmt.Errorf("assets: manifest: model %s: file %s is listed twice", mod.Name, f.Path)
			}
			paths[f.Path] = true
			if f.Size < 0 {
				return fmt.Errorf("assets: manifest: model %s: file %s: negative size %d", mod.Name, f.Path, f.Size)
			}
			if f.SHA256 != "" && !isSHA256(f.SHA256) {
				return fmt.Errorf("assets: manifest: model %s: file %s: sha256 %q is not 64 hex digits", mod.Name, f.Path, f.SHA256)
			}
		}
	}
	return nil
}

// validateApproxSize checks that an approximate size is one that is
// shown: positive, on a model with a file of no pinned size (pinned sizes
// win), and no less than those pinned, which it includes.
func (m Model) validateApproxSize() error {
	if m.ApproxSize == 0 {
		return nil
	}
	var pinned int64
	unpinned := false
	for _, f := range m.Files {
		pinned += max(f.Size, 0)
		unpinned = unpinned || f.Size == 0
	}
	switch {
	case m.ApproxSize < 0:
		return fmt.Errorf("assets: manifest: model %s: approx_size %d is not positive", m.Name, m.ApproxSize)
	case !unpinned:
		return fmt.Errorf("assets: manifest: model %s: approx_size is never used: every file has a pinned size", m.Name)
	case m.ApproxSize < pinned:
		return fmt.Errorf("assets: manifest: model %s: approx_size %d is less than the %d bytes of the files with pinned sizes", m.Name, m.ApproxSize, pinned)
	}
	return nil
}

// validateFormat checks what a model's format relies on: an MNN LLM
// export lists its config.json, beside which, at each of its sources
// (URLs), are the files the manifest does not list.
func (m Model) validateFormat() error {
	switch m.Format {
	case "":
		return nil
	case FormatMNNLLM:
		cfg := m.file(mnnConfig)
		if len(cfg.Sources) == 0 {
			return fmt.Errorf("assets: manifest: model %s: an MNN LLM export must list %s", m.Name, mnnConfig)
		}
		for _, src := range cfg.Sources {
			if u, err := url.Parse(src); err != nil || (u.Scheme != "http" && u.Scheme != "https") || path.Base(u.Path) != mnnConfig {
				return fmt.Errorf("assets: manifest: model %s: source %q of %s is not a URL of a file called %s", m.Name, src, mnnConfig, mnnConfig)
			}
		}
		return nil
	}
	return fmt.Errorf("assets: manifest: model %s: unknown format %q", m.Name, m.Format)
}

// localPath reports whether p is a clean relative slash-separated path
// that names something inside the directory it is joined to, without a
// control character (a NUL makes no file name, and a name from a
// mirror's config is locked in).
func localPath(p string) bool {
	return p != "." && !strings.Contains(p, `\`) && path.Clean(p) == p && filepath.IsLocal(filepath.FromSlash(p)) &&
		!strings.ContainsFunc(p, unicode.IsControl)
}

// isSHA256 reports whether s is a sha256 in hex.
func isSHA256(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == sha256.Size
}

// FormatSize writes a byte count for people: 1.5 MiB.
func FormatSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// FormatEstimate writes a byte count that may be approximate: as
// FormatSize when exact, else marked and to whole units below a GiB, as
// finely as the estimates are known: ~559 MiB.
func FormatEstimate(n int64, approx bool) string {
	switch {
	case !approx:
		return FormatSize(n)
	case n >= 1<<30:
		return "~" + FormatSize(n)
	case n >= 1<<20:
		return fmt.Sprintf("~%.0f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("~%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("~%d B", n)
}
