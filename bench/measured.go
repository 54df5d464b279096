package bench

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// Measured says which code was measured, on what, and when: what a figure
// needs beside it to be read a week later, when the code and the machine
// have moved on (cmd/perfdoc prints it over each table it makes).
type Measured struct {
	// Commit is the measured binary's, as voice-agent version says it
	// ("-dirty" when built from changed files); "" when it was not
	// stamped.
	Commit string `json:"commit"`
	// Machine names the CPU, its cores and the system the run saw:
	// "Intel Xeon Processor, 2 cores, linux/amd64".
	Machine string `json:"machine"`
	// Date is when the run was written, in UTC.
	Date time.Time `json:"date"`
}

// MeasuredNow is the provenance of a run of the binary built at commit,
// ending now on this machine.
func MeasuredNow(commit string) Measured {
	cpu := ""
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		cpu = cpuModel(f)
		f.Close()
	}
	return Measured{
		Commit:  commit,
		Machine: machineName(cpu, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH),
		Date:    time.Now().UTC().Truncate(time.Second),
	}
}

// cpuModel is the first "model name" of a /proc/cpuinfo, without the
// trademark signs; "" where it names none (arm64's lists only part
// numbers).
func cpuModel(cpuinfo io.Reader) string {
	for sc := bufio.NewScanner(cpuinfo); sc.Scan(); {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.NewReplacer("(R)", "", "(TM)", "", "(tm)", "").Replace(strings.TrimSpace(value))
		}
	}
	return ""
}

func machineName(cpu string, cores int, goos, goarch string) string {
	name := fmt.Sprintf("%d cores, %s/%s", cores, goos, goarch)
	if cpu != "" {
		name = cpu + ", " + name
	}
	return name
}
