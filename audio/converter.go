package audio

// Converter streams audio from one format to another (e.g. the TTS's
// 48 kHz stereo to the device's playback format), keeping resampler state
// across calls so chunk edges do not click.
type Converter struct {
	from, to Format
	mono     bool // downmix before resampling
	rs       *Resampler
	scratch  []float32 // downmixed input
	out      []float32 // resampled
	up       []float32 // upmixed result
}

// NewConverter returns a converter; identical formats pass through.
func NewConverter(from, to Format) (*Converter, error) {
	if err := from.Validate(); err != nil {
		return nil, err
	}
	if err := to.Validate(); err != nil {
		return nil, err
	}
	c := &Converter{from: from, to: to, mono: from.Channels != to.Channels}
	if from.Rate != to.Rate {
		ch := from.Channels
		if c.mono {
			ch = 1
		}
		rs, err := NewResampler(from.Rate, to.Rate, ch)
		if err != nil {
			return nil, err
		}
		c.rs = rs
	}
	return c, nil
}

// Process converts the next block. The result is valid until the next call.
func (c *Converter) Process(in []float32) []float32 {
	if c.from == c.to {
		return in
	}
	x := in
	if c.mono && c.from.Channels > 1 {
		c.scratch = Downmix(x, c.from.Channels, c.scratch[:0])
		x = c.scratch
	}
	if c.rs != nil {
		c.out = c.rs.Process(x, c.out[:0])
		x = c.out
	}
	return c.upmix(x)
}

// Flush returns the resampler's tail at the end of the stream.
func (c *Converter) Flush() []float32 {
	if c.rs == nil {
		return nil
	}
	c.out = c.rs.Flush(c.out[:0])
	return c.upmix(c.out)
}

func (c *Converter) upmix(x []float32) []float32 {
	if !c.mono || c.to.Channels == 1 {
		return x
	}
	c.up = Upmix(x, c.to.Channels, c.up[:0])
	return c.up
}
