package memstat

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A buffer the Go heap holds and touches shows as anonymous memory held by
// Go, and the sampler keeps its peak after it is gone.
func TestSamplerFollowsAnonymousPeak(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	const size = 64 << 20
	s := Sample(time.Millisecond)
	base := s.Reset()
	buf := make([]byte, size)
	for i := range buf {
		buf[i] = 1
	}
	require.Eventually(t, func() bool { return Now().Anon-base.Anon > size*9/10 }, 5*time.Second, time.Millisecond)
	time.Sleep(5 * time.Millisecond) // a sample or more with the buffer held
	runtime.KeepAlive(buf)
	peak := s.Stop().Sub(base)

	assert.Greater(t, peak.Anon, int64(size*9/10), "anonymous peak")
	assert.Greater(t, peak.Go, int64(size*9/10), "Go's peak")
	assert.Less(t, peak.File, int64(size/2), "a heap buffer is not file-backed")
	assert.GreaterOrEqual(t, PeakRSS(), peak.RSS, "the kernel's high-water mark is at least any sample")
}

func TestUsageString(t *testing.T) {
	u := Usage{RSS: 300 << 20, Anon: 200 << 20, File: 100 << 20, Go: 30 << 20, PSS: 250 << 20}
	assert.Equal(t, "RSS 300.0 MiB (200.0 anonymous, of which Go 30.0; 100.0 file-backed), PSS 250.0 MiB", u.String())
	assert.Equal(t, Usage{RSS: 100 << 20, Anon: 50 << 20}, Usage{RSS: 300 << 20, Anon: 250 << 20}.Sub(Usage{RSS: 200 << 20, Anon: 200 << 20}))
}

// Sampling allocates nothing: the sampler runs beside the code it
// measures, whose allocations bench stages reports. It reads
// /proc/self/status afresh at each sample: a buffer touched between two
// samples shows in the second.
func TestSamplingAllocatesNothing(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	s := Sample(time.Hour) // samples only when asked
	defer s.Stop()
	assert.Zero(t, testing.AllocsPerRun(20, func() { s.observe() }))
	before := s.observe()
	buf := make([]byte, 32<<20)
	for i := range buf {
		buf[i] = 1
	}
	after := s.observe()
	runtime.KeepAlive(buf)
	assert.Greater(t, after.Anon-before.Anon, int64(len(buf)*9/10))
}

func TestKBField(t *testing.T) {
	status := []byte("Name:\tvoice-agent\nVmHWM:\t  1234 kB\nVmRSS:\t   567 kB\nRssAnon:\t 89 kB\n")
	for _, tc := range []struct {
		name string
		want int64
	}{{"VmHWM:", 1234 << 10}, {"VmRSS:", 567 << 10}, {"RssAnon:", 89 << 10}, {"RssFile:", 0}, {"Name:", 0}} {
		assert.Equal(t, tc.want, kbField(status, tc.name), tc.name)
	}
}
