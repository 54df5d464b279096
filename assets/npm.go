package assets

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// DefaultNPMRegistry is where npm: sources are fetched from.
const DefaultNPMRegistry = "https://registry.npmjs.org"

// npmSource is a file inside a package's tarball on the npm registry,
// written in the manifest as "npm:PACKAGE@VERSION#PATH/IN/TARBALL". Some
// models are published there (Silero VAD in @ricky0123/vad-web), and the
// registry is reachable from networks that block model hubs.
type npmSource struct {
	pkg, version, member string
}

func parseNPMSource(src string) (npmSource, bool, error) {
	rest, ok := strings.CutPrefix(src, "npm:")
	if !ok {
		return npmSource{}, false, nil
	}
	spec, member, _ := strings.Cut(rest, "#")
	at := strings.LastIndex(spec, "@")
	if at <= 0 || member == "" {
		return npmSource{}, true, fmt.Errorf("source %q: want npm:PACKAGE@VERSION#PATH", src)
	}
	return npmSource{pkg: spec[:at], version: spec[at+1:], member: member}, true, nil
}

// tarballURL follows the registry's layout: /@scope/name/-/name-1.2.3.tgz.
func (s npmSource) tarballURL(registry string) string {
	return strings.TrimSuffix(registry, "/") + "/" + s.pkg + "/-/" + path.Base(s.pkg) + "-" + s.version + ".tgz"
}

func (p *Puller) npmRegistry() string {
	if p.NPMRegistry != "" {
		return p.NPMRegistry
	}
	return DefaultNPMRegistry
}

// extractMember copies member out of the gzipped tarball at tgz into
// part, replacing what part held.
func extractMember(tgz, member, part string) error {
	in, err := os.Open(tgz)
	if err != nil {
		return err
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		return fmt.Errorf("package tarball: %w", err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("package tarball has no %s", member)
		}
		if err != nil {
			return fmt.Errorf("package tarball: %w", err)
		}
		if h.Typeflag != tar.TypeReg || path.Clean(h.Name) != path.Clean(member) {
			continue
		}
		out, err := os.Create(part)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, tr); err != nil {
			out.Close()
			return fmt.Errorf("package tarball: %s: %w", member, err)
		}
		if err := out.Sync(); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	}
}

// fetchNPM downloads the package tarball beside part (resuming like any
// download) and extracts the file from it.
func (p *Puller) fetchNPM(ctx context.Context, m Model, f File, s npmSource, u, part string) error {
	tgz := part + ".tgz"
	if err := p.fetch(ctx, m, f, u, tgz, 0); err != nil {
		return err
	}
	defer removePart(tgz)
	if err := extractMember(tgz, s.member, part); err != nil {
		os.Remove(part)
		return permanentError{fmt.Errorf("%s: %w", Redacted(u), err)}
	}
	return nil
}
