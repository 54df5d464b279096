//go:build mnn && !linux

package mnn

// keepStdoutClean does nothing where the engine's printf logging has not
// been looked at.
func keepStdoutClean() {}

// drainEngineOutput has nothing to read where keepStdoutClean does nothing.
func drainEngineOutput() {}
