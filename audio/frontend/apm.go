//go:build webrtcapm

package frontend

/*
#cgo pkg-config: webrtc-audio-processing
#cgo CXXFLAGS: -std=c++11
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// Processor is the audio front end. Its methods are safe for concurrent
// use; calls are serialised.
type Processor struct {
	mu    sync.Mutex
	apm   *C.fe_apm
	out   []float32
	aec   bool
	delay int
	// quiet is the same processing without the echo canceller, which
	// takes the capture once nothing has played for a while (farSilent
	// frames; see resting): with no echo to cancel, the canceller is most
	// of what the front end costs a session that listens all day. apm is
	// then not called at all, so its adaptive filter, its delay estimate
	// and its far and near streams stay as they were, in step, and cancel
	// the next reply's echo from its first frame.
	quiet     *C.fe_apm
	farSilent int
	// restarts counts the times the processor was started afresh because
	// its output was not finite.
	restarts int
}

const msgLen = 256

func shimErr(op string, rc C.int, msg []C.char) error {
	m := C.GoString(&msg[0])
	switch rc {
	case C.FE_ERR_EXCEPTION:
		return fmt.Errorf("frontend: %s: C++ exception: %s", op, m)
	case C.FE_ERR_NULL:
		return fmt.Errorf("frontend: %s: %s", op, m)
	}
	return fmt.Errorf("frontend: %s: %s failed with WebRTC error %d", op, m, int(rc))
}

// New creates a Processor.
func New(cfg Config) (*Processor, error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	b := func(v bool) C.int {
		if v {
			return 1
		}
		return 0
	}
	cc := C.fe_config{
		aec:              b(cfg.AEC),
		ns:               b(cfg.NS),
		agc:              b(cfg.AGC),
		delay_ms:         C.int(cfg.DelayMS),
		ns_level:         C.int(cfg.NSLevel),
		agc_target_dbfs:  C.int(cfg.AGCTargetDBFS),
		agc_comp_gain_db: C.int(agcCompressionGainDB),
		sample_rate:      C.int(SampleRate),
	}
	var msg [msgLen]C.char
	var a *C.fe_apm
	if rc := C.fe_new(&cc, &a, &msg[0], msgLen); rc != 0 {
		return nil, shimErr("New", rc, msg[:])
	}
	p := &Processor{apm: a, out: make([]float32, FrameSize), aec: cfg.AEC, delay: cfg.DelayMS}
	if cfg.AEC {
		cc.aec = 0
		if rc := C.fe_new(&cc, &p.quiet, &msg[0], msgLen); rc != 0 {
			C.fe_free(a)
			return nil, shimErr("New", rc, msg[:])
		}
	}
	return p, nil
}

// quietAfterMS, beyond the configured delay, is how long the far end must
// have been silent before the echo canceller rests: the extended filter's
// tail is about 128 ms, and the delay estimate may exceed the setting.
const quietAfterMS = 1000

// resting says whether the echo canceller rests for the frame at hand.
func (p *Processor) resting() bool {
	return p.quiet != nil && p.farSilent*1000*FrameSize/SampleRate >= quietAfterMS+p.delay
}

// Far feeds 10 ms (160 samples) of the signal that was played to the
// speaker: the echo reference.
func (p *Processor) Far(frame []float32) error {
	if err := checkFrame("far", frame); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.apm == nil {
		return ErrClosed
	}
	p.farSilent++
	for _, v := range frame {
		if v != 0 {
			p.farSilent = 0
			break
		}
	}
	if p.resting() {
		return nil
	}
	var msg [msgLen]C.char
	if rc := C.fe_far(p.apm, (*C.float)(unsafe.Pointer(&frame[0])), C.int(len(frame)), &msg[0], msgLen); rc != 0 {
		return shimErr("Far", rc, msg[:])
	}
	return nil
}

// Near processes 10 ms (160 samples) of captured audio and returns the
// processed frame (a new slice).
func (p *Processor) Near(frame []float32) ([]float32, error) {
	if err := checkFrame("near", frame); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.apm == nil {
		return nil, ErrClosed
	}
	apm := p.apm
	if p.resting() {
		apm = p.quiet
	}
	var msg [msgLen]C.char
	rc := C.fe_near(apm, (*C.float)(unsafe.Pointer(&frame[0])), (*C.float)(unsafe.Pointer(&p.out[0])),
		C.int(len(frame)), nil, &msg[0], msgLen)
	if rc == C.FE_RESTARTED {
		p.restarts++
		rc = 0
	}
	if rc != 0 {
		return nil, shimErr("Near", rc, msg[:])
	}
	out := make([]float32, FrameSize)
	copy(out, p.out)
	return out, nil
}

// Restarts is how many times the processor produced a frame that was not
// finite (NaN or infinite) and was started afresh; such a frame is passed
// on as captured.
func (p *Processor) Restarts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.restarts
}

// SetDelay updates the render→capture delay in milliseconds (time from a
// sample being passed to Far until its echo arrives in Near). Negative
// values are treated as 0.
func (p *Processor) SetDelay(ms int) {
	if ms < 0 {
		ms = 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = ms
	if p.apm != nil {
		C.fe_set_delay(p.apm, C.int(ms))
	}
}

// Close releases the WebRTC instance. It is safe to call more than once.
func (p *Processor) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.apm != nil {
		C.fe_free(p.apm)
		p.apm = nil
	}
	if p.quiet != nil {
		C.fe_free(p.quiet)
		p.quiet = nil
	}
}
