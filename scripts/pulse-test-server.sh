#!/usr/bin/env bash
# Starts a PulseAudio server for the audio/device tests and loads the null
# sinks they use. Idempotent: if a server already answers (a desktop
# session, or an earlier run) it only adds whatever sinks are missing.
#
#   scripts/pulse-test-server.sh          start / top up
#   scripts/pulse-test-server.sh --stop   ask the running server to exit
#
# Written for CI containers running as root with no login session (no
# D-Bus, no XDG_RUNTIME_DIR, no systemd --user):
#
#  * The daemon runs in per-user mode even as root. --system mode would
#    also work as root, but it forbids loading and unloading modules at
#    runtime, and the tests unload a sink to simulate an unplugged device.
#    As root PulseAudio only warns ("not intended to be run as root").
#  * -n skips default.pa: no hardware probing, and no module-suspend-on-idle
#    or module-always-sink to change the devices under the tests.
#  * Besides the per-user socket, the server listens on the system-wide
#    socket /run/pulse/native with anonymous auth. libpulse tries that path
#    after the per-user one, so clients find the server whatever their
#    HOME / XDG_RUNTIME_DIR / PULSE_RUNTIME_PATH happen to be.
#  * The null sinks are loaded with norewinds=1. An idle null sink renders
#    up to 2 s ahead and relies on rewinds when a stream arrives; miniaudio
#    starts its streams corked, the uncork does not rewind that far, so its
#    first callbacks would come up to 2 s late. With norewinds the sink
#    renders at most 50 ms ahead.
set -euo pipefail

SINKS=(va_test_sink va_spare_sink)
SYSTEM_SOCKET_DIR=/run/pulse
STATE_DIR=${VA_PULSE_DIR:-/tmp/va-pulse}
LOG=$STATE_DIR/pulseaudio.log

log() { echo "pulse-test-server: $*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    log "need root to run: $*"; return 1
  fi
}

install_pulse() {
  command -v pulseaudio >/dev/null && command -v pactl >/dev/null && return 0
  log "installing pulseaudio and pulseaudio-utils"
  export DEBIAN_FRONTEND=noninteractive
  if ! as_root apt-get install -y --no-install-recommends pulseaudio pulseaudio-utils >/dev/null; then
    as_root apt-get update >/dev/null
    as_root apt-get install -y --no-install-recommends pulseaudio pulseaudio-utils >/dev/null
  fi
}

server_up() { pactl info >/dev/null 2>&1; }

if [ "${1:-}" = "--stop" ]; then
  # Works over any socket, whatever environment started the daemon.
  if command -v pactl >/dev/null && server_up; then
    pactl exit || true
    log "stopped"
  fi
  exit 0
fi

install_pulse

if ! server_up; then
  mkdir -p "$STATE_DIR"
  as_root mkdir -p "$SYSTEM_SOCKET_DIR"
  # A socket left by a killed daemon makes the new one fail to bind.
  if [ -S "$SYSTEM_SOCKET_DIR/native" ]; then as_root rm -f "$SYSTEM_SOCKET_DIR/native"; fi
  sys_socket=""
  if [ -w "$SYSTEM_SOCKET_DIR" ]; then
    sys_socket="load-module module-native-protocol-unix socket=$SYSTEM_SOCKET_DIR/native auth-anonymous=1"
  fi
  cat >"$STATE_DIR/server.pa" <<EOF
load-module module-native-protocol-unix
$sys_socket
EOF
  log "starting pulseaudio (log: $LOG)"
  pulseaudio --daemonize=yes -n --file="$STATE_DIR/server.pa" \
    --exit-idle-time=-1 --log-target="file:$LOG" --log-level=info
  for _ in $(seq 50); do server_up && break; sleep 0.1; done
  if ! server_up; then
    log "pulseaudio did not come up; last log lines:"
    tail -n 20 "$LOG" >&2 || true
    exit 1
  fi
fi

for sink in "${SINKS[@]}"; do
  if pactl list short sinks | awk '{print $2}' | grep -qx "$sink"; then
    continue
  fi
  # The description is what miniaudio reports as the device name.
  args=(sink_name="$sink" sink_properties=device.description="$sink")
  # pipewire-pulse (a developer desktop) may not know norewinds.
  pactl load-module module-null-sink "${args[@]}" norewinds=1 >/dev/null 2>&1 ||
    pactl load-module module-null-sink "${args[@]}" >/dev/null
  log "loaded null sink $sink (capture from $sink.monitor)"
done

# Tests that use the default devices must not disturb va_test_sink.
pactl set-default-sink va_spare_sink
pactl set-default-source va_spare_sink.monitor
pactl info | grep -E '^(Server String|Server Version|Default Sink|Default Source)' >&2
