package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Numbers outside what a flag can mean are refused as the command line is
// parsed, naming the flag and what it takes (bug: --pace NaN, -1 or Inf,
// --compute-scale NaN and --echo-gain NaN were taken, the last poisoning
// the microphone with 0 turns and exit 0; --playback-rate 1 spun a core;
// --echo-delay -50ms, pull --timeout -1s (no limit) and bench llm
// --conversation -5 or --runs -5 were taken or ignored). None of these is
// a config file key: the file's settings are checked by Validate.
func TestNumbersOutOfRangeAreRefused(t *testing.T) {
	replay := []string{"replay"}
	for _, tc := range []struct {
		command    []string
		flag       string
		refused    []string
		taken      []string
		takesWords string
	}{
		{replay, "pace", []string{"NaN", "-1", "Inf", "-Inf", "1e-300", "1001"}, []string{"0", "0.01", "1", "1000"}, "0 (as fast as possible) or a speed from 0.01 to 1000"},
		{replay, "playback-rate", []string{"0", "1", "9", "7999", "384001"}, []string{"8000", "16000", "384000"}, "a rate from 8000 to 384000 Hz, as device.rate"},
		{replay, "echo-gain", []string{"NaN", "-0.5", "Inf", "11"}, []string{"0", "0.5", "10"}, "0 (no echo path) or a gain up to 10"},
		{replay, "echo-delay", []string{"-50ms", "-1ns", "1.001s"}, []string{"0s", "60ms", "1s"}, "a delay from 0 to 1s"},
		{replay, "compute-scale", []string{"NaN", "-1", "+Inf", "1000.5"}, []string{"0", "1", "50", "1000"}, "0 (compute is free) or a factor up to 1000"},
		{[]string{"bench", "pipeline"}, "compute-scale", []string{"NaN"}, []string{"1"}, "0 (compute is free)"},
		{[]string{"voicebench", "run"}, "compute-scale", []string{"-2"}, []string{"20"}, "0 (compute is free)"},
		{[]string{"models", "pull"}, "timeout", []string{"-1s", "-1ns"}, []string{"0s", "30m"}, "0 (no limit) or a positive duration"},
		{[]string{"bench", "llm"}, "conversation", []string{"-5", "1001"}, []string{"0", "40", "1000"}, "0 (the speed tests) or 1 to 1000 turns"},
		{[]string{"bench", "llm"}, "runs", []string{"-5", "0", "1001"}, []string{"1", "5"}, "1 to 1000 runs"},
	} {
		for _, v := range tc.refused {
			t.Run(tc.flag+"="+v, func(t *testing.T) {
				cmd, _, err := newApp().root().Find(tc.command)
				require.NoError(t, err)
				err = cmd.ParseFlags([]string{"--" + tc.flag, v})
				require.Error(t, err)
				assert.Contains(t, err.Error(), `"--`+tc.flag+`"`, "names the flag")
				assert.Contains(t, err.Error(), "want "+tc.takesWords)
			})
		}
		for _, v := range tc.taken {
			cmd, _, err := newApp().root().Find(tc.command)
			require.NoError(t, err)
			assert.NoError(t, cmd.ParseFlags([]string{"--" + tc.flag, v}), "%v --%s %s", tc.command, tc.flag, v)
		}
	}
}

// A refused number stops the command before it runs, as an error (exit
// status 1), with the way to the command's flags.
func TestRefusedNumberStopsTheCommand(t *testing.T) {
	err := runErr(t, "replay", "no-such.wav", "--playback-rate", "1")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `invalid argument "1" for "--playback-rate" flag: want a rate from 8000 to 384000 Hz`)
	assert.Contains(t, err.Error(), "`voice-agent replay --help` lists its flags")
	assert.NotContains(t, err.Error(), "no-such.wav", "refused before the recording is opened")
}
