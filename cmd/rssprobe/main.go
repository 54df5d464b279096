// Temporary: RSS of one ONNX session under ONNX Runtime memory options.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/internal/onnx"
)

func rss() (cur, hwm string) {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		for _, k := range []string{"VmRSS", "RssAnon", "RssFile"} {
			if strings.HasPrefix(l, k) {
				cur += k + "=" + strings.Fields(l)[1] + " "
			}
		}
		if strings.HasPrefix(l, "VmHWM") {
			hwm = "HWM=" + strings.Fields(l)[1]
		}
	}
	b, _ = os.ReadFile("/proc/self/smaps_rollup")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "Pss:") || strings.HasPrefix(l, "Pss_File:") {
			cur += strings.Fields(l)[0] + strings.Fields(l)[1] + " "
		}
	}
	return
}

func main() {
	arena := flag.Bool("arena", true, "cpu mem arena")
	prepack := flag.Bool("prepack", true, "prepacking")
	devalloc := flag.Bool("devalloc", false, "use_device_allocator_for_initializers")
	runs := flag.Int("runs", 3, "runs")
	n := flag.Int("sessions", 1, "sessions of the same file list")
	flag.Parse()
	if err := onnx.Init(""); err != nil {
		panic(err)
	}
	c, h := rss()
	fmt.Println("start", c, h)
	var sessions []*ort.DynamicAdvancedSession
	var inss [][]ort.InputOutputInfo
	var outss [][]ort.InputOutputInfo
	for i := 0; i < *n; i++ {
		for _, path := range flag.Args() {
			ins, outs, err := onnx.Declaration(path)
			if err != nil {
				panic(err)
			}
			so, _ := ort.NewSessionOptions()
			so.SetIntraOpNumThreads(1)
			so.SetInterOpNumThreads(1)
			so.SetCpuMemArena(*arena)
			if !*prepack {
				so.AddSessionConfigEntry("session.disable_prepacking", "1")
			}
			if *devalloc {
				so.AddSessionConfigEntry("session.use_device_allocator_for_initializers", "1")
			}
			var in, out []string
			for _, x := range ins {
				in = append(in, x.Name)
			}
			for _, x := range outs {
				out = append(out, x.Name)
			}
			s, err := ort.NewDynamicAdvancedSession(path, in, out, so)
			if err != nil {
				panic(err)
			}
			sessions = append(sessions, s)
			inss = append(inss, ins)
			outss = append(outss, outs)
			c, h := rss()
			fmt.Println("loaded", path, c, h)
		}
	}
	for r := 0; r < *runs; r++ {
		for i, s := range sessions {
			var vals []ort.Value
			for _, in := range inss[i] {
				dims := make([]int64, len(in.Dimensions))
				for j, d := range in.Dimensions {
					dims[j] = max(d, 1)
				}
				sh := ort.NewShape(dims...)
				k := int(sh.FlattenedSize())
				var v ort.Value
				switch in.DataType {
				case onnx.Float:
					d := make([]float32, k)
					for j := range d {
						d[j] = float32(0.5 * math.Sin(float64(j)*0.37))
					}
					v, _ = ort.NewTensor(sh, d)
				case onnx.Int64:
					d := make([]int64, k)
					for j := range d {
						d[j] = 1
					}
					v, _ = ort.NewTensor(sh, d)
				case onnx.Int32:
					d := make([]int32, k)
					for j := range d {
						d[j] = 1
					}
					v, _ = ort.NewTensor(sh, d)
				default:
					v, _ = ort.NewTensor(sh, make([]bool, k))
				}
				vals = append(vals, v)
			}
			outs := make([]ort.Value, len(outss[i]))
			t0 := time.Now()
			if err := s.Run(vals, outs); err != nil {
				panic(err)
			}
			fmt.Println("ms", time.Since(t0).Milliseconds())
			for _, v := range append(vals, outs...) {
				v.Destroy()
			}
		}
		c, h := rss()
		fmt.Println("run", r, c, h)
	}
}
