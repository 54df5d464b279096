package mnn

import "time"

// stepBudget is how long one engine call may decode: a barge-in waits at
// most this long (or one token, if a token takes longer) for the engine.
const stepBudget = 5 * time.Millisecond

// stepTokens is how many tokens the next engine call decodes, given that
// the last took took for batch tokens: as many as fit in stepBudget, at
// least one. A real model on a device decodes one token per call; a fast
// one (the tiny test model decodes a token in about 0.1 ms) would spend a
// third of its time calling in if it did.
func stepTokens(took time.Duration, batch int) int {
	perToken := took / time.Duration(batch)
	if perToken <= 0 {
		return maxStep
	}
	return min(max(int(stepBudget/perToken), 1), maxStep)
}

// maxStep bounds a call however fast tokens come.
const maxStep = 64
