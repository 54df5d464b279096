//go:build !webrtcapm

package frontend

// Processor is the audio front end. In this build (without the webrtcapm
// tag) it cannot be created; New always returns ErrUnavailable.
type Processor struct{}

// New returns ErrUnavailable: the package was built without the webrtcapm
// build tag.
func New(cfg Config) (*Processor, error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	return nil, ErrUnavailable
}

// Far is unavailable in this build.
func (p *Processor) Far(frame []float32) error { return ErrUnavailable }

// Near is unavailable in this build.
func (p *Processor) Near(frame []float32) ([]float32, error) { return nil, ErrUnavailable }

// SetDelay is a no-op in this build.
func (p *Processor) SetDelay(ms int) {}

// Close is a no-op in this build.
func (p *Processor) Close() {}

// Restarts is always 0: there is no processor to restart.
func (p *Processor) Restarts() int { return 0 }
