package bench

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A result names the machine by its CPU where /proc/cpuinfo does, and by
// its cores and system always.
func TestMachineName(t *testing.T) {
	for _, tc := range []struct {
		name, cpuinfo, want string
	}{
		{"x86-64", "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Processor\nflags\t\t: avx2\n\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) Processor\n",
			"Intel Xeon Processor, 2 cores, linux/amd64"},
		{"trademarks", "model name\t: AMD EPYC(TM) 7B13 64-Core Processor\n", "AMD EPYC 7B13 64-Core Processor, 2 cores, linux/amd64"},
		{"arm64, part numbers only", "processor\t: 0\nBogoMIPS\t: 48.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd0b\n", "2 cores, linux/amd64"},
		{"no cpuinfo", "", "2 cores, linux/amd64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, machineName(cpuModel(strings.NewReader(tc.cpuinfo)), 2, "linux", "amd64"))
		})
	}
}

// A run says when it was measured, to the second, in UTC.
func TestMeasuredNow(t *testing.T) {
	m := MeasuredNow("7673865-dirty")
	assert.Equal(t, "7673865-dirty", m.Commit)
	assert.Contains(t, m.Machine, " cores, ")
	assert.Equal(t, "UTC", m.Date.Location().String())
	assert.Zero(t, m.Date.Nanosecond())
}
