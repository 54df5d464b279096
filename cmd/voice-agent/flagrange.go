package main

import (
	"fmt"

	"github.com/spf13/pflag"
)

// limitFlag makes the flag name of f refuse, as the command line is
// parsed, a value for which within is false, saying what it takes. Go's
// parsers take NaN, Inf and negative durations without a word, and each
// of those, let through, spins a core, hangs a replay or poisons the
// audio with nothing said; refused here, the command stops before anything
// runs, with exit status 1 and the flag named.
func limitFlag(f *pflag.FlagSet, name string, within func() bool, takes string) {
	fl := f.Lookup(name)
	fl.Value = limitedValue{Value: fl.Value, within: within, takes: takes}
}

// limitedValue is a flag's value that checks its range once set.
type limitedValue struct {
	pflag.Value
	within func() bool
	takes  string
}

func (v limitedValue) Set(s string) error {
	if err := v.Value.Set(s); err != nil {
		return err
	}
	if !v.within() {
		return fmt.Errorf("want %s", v.takes)
	}
	return nil
}
