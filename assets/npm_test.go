package assets

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// npmTarball packs files the way npm does (under package/).
func npmTarball(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, data := range files {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}))
		_, err := tw.Write(data)
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func TestParseNPMSource(t *testing.T) {
	cases := []struct {
		src, url, member string
		isNPM, bad       bool
	}{
		{src: "npm:@ricky0123/vad-web@0.0.31#package/dist/silero_vad_v5.onnx", isNPM: true,
			url: "R/@ricky0123/vad-web/-/vad-web-0.0.31.tgz", member: "package/dist/silero_vad_v5.onnx"},
		{src: "npm:onnxruntime-node@1.24.3#package/x", isNPM: true, url: "R/onnxruntime-node/-/onnxruntime-node-1.24.3.tgz", member: "package/x"},
		{src: "npm:@scope/name#package/x", isNPM: true, bad: true},
		{src: "npm:name@1.0.0", isNPM: true, bad: true},
		{src: "https://example.com/x"},
	}
	for _, c := range cases {
		s, isNPM, err := parseNPMSource(c.src)
		require.Equal(t, c.isNPM, isNPM, "%s: npm %v err %v", c.src, isNPM, err)
		require.Equal(t, c.bad, err != nil, "%s: npm %v err %v", c.src, isNPM, err)
		if !c.isNPM || c.bad {
			continue
		}
		assert.Equal(t, c.url, s.tarballURL("R/"), "%s: url", c.src)
		assert.Equal(t, c.member, s.member, "%s: member", c.src)
	}
}

func TestPullFromNPMTarball(t *testing.T) {
	data := testContent(70_000)
	tgz := npmTarball(t, map[string][]byte{"package/README.md": []byte("readme"), "package/dist/model.bin": data})
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/@models/pkg/-/pkg-1.2.3.tgz":
			http.ServeContent(w, r, "pkg.tgz", time.Time{}, bytes.NewReader(tgz))
		case "/@models/corrupt/-/corrupt-1.0.0.tgz":
			w.Write([]byte("not a tarball"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	cases := []struct {
		name, source, wantErr string
	}{
		{name: "member extracted", source: "npm:@models/pkg@1.2.3#package/dist/model.bin"},
		{name: "member missing", source: "npm:@models/pkg@1.2.3#package/dist/other.bin", wantErr: "has no package/dist/other.bin"},
		{name: "corrupt tarball", source: "npm:@models/corrupt@1.0.0#package/model.bin", wantErr: "package tarball"},
		{name: "unknown version", source: "npm:@models/pkg@9.9.9#package/dist/model.bin", wantErr: "not found (404)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hits.Store(0)
			p := testPuller(t, srv)
			m := testModel(srv.URL, data, true)
			m.Files[0].Sources = []string{c.source}
			err := p.Pull(testCtx(t), m)
			if c.wantErr == "" {
				require.NoError(t, err)
				checkFile(t, p, m, data)
				return
			}
			require.ErrorContains(t, err, c.wantErr)
			assert.Equal(t, int32(1), hits.Load(), "requests: a bad package is not retried")
			st, _ := p.Verify(m)
			assert.False(t, st[0].Present, "a file was left in the cache: %+v", st[0])
		})
	}
}
