package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/voiceassistant/voice/control"
)

// ctlCmd sends one command to a running agent's control socket, for
// shell use: the host's own programs use package control, or the wire.
func (a *app) ctlCmd() *cobra.Command {
	var socket string
	var events bool
	cmd := &cobra.Command{
		Use: "ctl COMMAND [ARGS]",
		Example: `  voice-agent ctl talk start
  voice-agent ctl say "Your meeting starts in 5 minutes."
  voice-agent ctl say 你的会议五分钟后开始。
  voice-agent ctl status --events     # then every event and tool call, until Ctrl-C
  voice-agent ctl tools camera.json   # declare the host's tools (- reads stdin)
  voice-agent ctl tool-result call-7 A photo of a red bicycle.
  voice-agent ctl tool-error call-8 The camera is off.`,
		Short: "Send a command to a running agent over its control socket",
		Long: `Sends one command to the agent that voice-agent run serves on its control
socket (control.socket in the config, or --socket) and prints the answer:
the command's data (status's), or nothing. A command the agent refuses
exits non-zero with its error. Commands: ` + control.Usage + `.
With --events it then prints every event as --json does, and every call
of the host's tools as {"tool_call":{...}} (or {"tool_cancel":{...}}),
for a script to answer with tool-result or tool-error.
docs/control.md describes the socket.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			command, err := control.ParseArgs(args)
			if err != nil {
				return err
			}
			if socket == "" {
				socket = a.cfg.Control.Socket
			}
			if socket == "" {
				return errors.New("ctl: no socket: give --socket, or set control.socket in the config")
			}
			c, err := control.Dial(cmd.Context(), socket)
			if err != nil {
				return err
			}
			defer c.Close()
			answer, err := c.Do(cmd.Context(), command)
			if err != nil {
				return fmt.Errorf("ctl %s: %w", args[0], err)
			}
			out := cmd.OutOrStdout()
			if answer.Data != nil {
				fmt.Fprintf(out, "%s\n", answer.Data)
			}
			if !events {
				return nil
			}
			// Until Ctrl-C, or the agent goes away (which closes both).
			for {
				var line []byte
				select {
				case e, ok := <-c.Events():
					if !ok {
						return nil
					}
					line = bytes.TrimSpace(e)
				case tc, ok := <-c.ToolCalls():
					if !ok {
						return nil
					}
					if line, err = toolCallLine(tc); err != nil {
						return err
					}
				case <-cmd.Context().Done():
					return nil
				}
				if _, err := fmt.Fprintf(out, "%s\n", line); err != nil {
					return err
				}
			}
		},
	}
	cmd.Flags().StringVar(&socket, "socket", "", "the control socket's path (default: control.socket in the config)")
	cmd.Flags().BoolVar(&events, "events", false, "after the answer, print every event as a JSON line until interrupted")
	return cmd
}

// toolCallLine is a tool call as ctl prints it: as the socket's line has
// it less the version, {"tool_call":{...}} or {"tool_cancel":{...}}, so
// that a script tells it from the events by its key.
func toolCallLine(tc control.ToolCall) ([]byte, error) {
	key := "tool_call"
	if tc.Cancelled {
		key = "tool_cancel"
	}
	line, err := json.Marshal(map[string]control.ToolCall{key: tc})
	if err != nil {
		return nil, fmt.Errorf("ctl: tool call %s: %w", tc.ID, err)
	}
	return line, nil
}
