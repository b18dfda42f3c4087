#!/usr/bin/env bash
# Desktop smoke test: the real desktop build under Xvfb with a D-Bus session.
# Starts the app, screenshots the window, checks that the tray registered, that
# a health change swaps the tray icon, that a second launch hands over to the
# first (single instance), and that SIGTERM quits cleanly.
set -euo pipefail
BIN=${1:?usage: smoke.sh path/to/omniroute-desktop}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ART="$ROOT/tests/e2e/artifacts"
mkdir -p "$ART"
TMP=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -n "${DBUS_SESSION_BUS_PID:-}" ] && kill "$DBUS_SESSION_BUS_PID" 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "desktop smoke: FAIL: $*"; echo "--- app stderr"; tail -40 "$TMP/err.log" || true; exit 1; }

for n in $(seq 90 120); do [ -e /tmp/.X11-unix/X$n ] || { DISPLAY_NUM=$n; break; }; done
Xvfb ":$DISPLAY_NUM" -screen 0 1280x900x24 -nolisten tcp >"$TMP/xvfb.log" 2>&1 &
PIDS+=($!)
export DISPLAY=":$DISPLAY_NUM"
for _ in $(seq 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
eval "$(dbus-launch --sh-syntax)"
export DBUS_SESSION_BUS_ADDRESS
# Desktop notifications go to org.freedesktop.Notifications on this bus: watch for them.
if command -v dbus-monitor >/dev/null; then
  dbus-monitor --session "interface='org.freedesktop.Notifications',member='Notify'" >"$TMP/notify.log" 2>&1 &
  PIDS+=($!)
fi

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export OMNIROUTE_DATA_DIR="$TMP/data" OMNIROUTE_PORT="$PORT" XDG_CONFIG_HOME="$TMP/config" HOME="$TMP/home"
mkdir -p "$HOME"
"$BIN" >"$TMP/out.log" 2>"$TMP/err.log" &
APP=$!
PIDS+=($APP)
BASE="http://127.0.0.1:$PORT"

wait_for() { # wait_for <seconds> <command...>
  local t=$1; shift
  for _ in $(seq $((t * 10))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  return 1
}
wait_for 60 curl -fsS "$BASE/api/monitoring/health" || fail "gateway did not answer"
wait_for 60 grep -q 'window ready' "$TMP/err.log" || fail "window did not start"
wait_for 30 grep -q 'tray ready' "$TMP/err.log" || fail "tray did not register"
echo "desktop smoke: gateway, window and tray are up"

wait_for 30 sh -c "xwininfo -root -tree | grep -q '\"OmniRoute\"'" || fail "no OmniRoute window on the display"
# The menu entry's StartupWMClass must be the window's class, or desktops
# show the running app as a second, unnamed icon.
WID=$(xwininfo -root -tree | grep '"OmniRoute"' | head -n 1 | awk '{print $1}')
CLASS=$(xprop -id "$WID" WM_CLASS)
WANT=$(sed -n 's/^StartupWMClass=//p' "$ROOT/build/linux/omniroute.desktop")
echo "$CLASS" | grep -q "\"$WANT\"" || fail "window class ($CLASS) is not the menu entry's StartupWMClass=$WANT"
echo "desktop smoke: window class $CLASS matches the menu entry"
sleep 3 # let WebKit paint the dashboard
import -window root "$ART/desktop-window.png"
SD=$(convert "$ART/desktop-window.png" -colorspace Gray -format '%[fx:standard_deviation]' info:)
python3 -c "import sys; sys.exit(0 if float('$SD') > 0.02 else 1)" || fail "screenshot is blank (stddev $SD)"
echo "desktop smoke: window screenshot $ART/desktop-window.png (stddev $SD)"

# A connection to a closed port fails with transport errors; a streak of them
# (failover.failureStreak, 3) cools it down, and health leaves "healthy": the
# tray icon must follow.
TOKEN=$(sed -n 's/.*#token=\(omt_[A-Za-z0-9_-]*\).*/\1/p' "$TMP/out.log")
KEY=$(sed -n 's/.*API key: *\(sk-omni-[A-Za-z0-9_-]*\).*/\1/p' "$TMP/out.log")
[ -n "$TOKEN" ] && [ -n "$KEY" ] || fail "banner did not show the token and key"
curl -fsS "$BASE/api/providers" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  -d '{"provider":"openai-compatible","name":"dead","apiKey":"k","baseUrl":"http://127.0.0.1:9/v1","models":["m"]}' >/dev/null
for _ in 1 2 3 4; do
  curl -sS "$BASE/v1/chat/completions" -H "Authorization: Bearer $KEY" \
    -d '{"model":"openai-compatible/m","messages":[{"role":"user","content":"hi"}]}' >/dev/null
done
wait_for 15 grep -Eq 'tray icon.*health=(degraded|unhealthy)' "$TMP/err.log" || fail "tray icon did not follow health"
grep -Eq "tray icon.*status=\"?0 of 1 connections serving" "$TMP/err.log" || fail "tray status line did not follow health"
echo "desktop smoke: tray icon follows health"
# The failing connection is announced on the session bus (informational: a
# bus without a notification server may refuse the call before a monitor sees it).
if [ -s "$TMP/notify.log" ] || command -v dbus-monitor >/dev/null; then
  if wait_for 10 grep -q 'OmniRoute: dead' "$TMP/notify.log"; then
    echo "desktop smoke: the outage was announced over org.freedesktop.Notifications"
  else
    echo "desktop smoke: note: no Notify call seen on the session bus"
  fi
fi

# Single instance: a second launch hands over to the first and exits.
"$BIN" >"$TMP/second.log" 2>&1 &
SECOND=$!
PIDS+=($SECOND)
wait_for 20 sh -c "! kill -0 $SECOND" || fail "a second instance kept running"
kill -0 "$APP" || fail "the first instance died when a second was launched"
echo "desktop smoke: single instance"

kill -TERM "$APP"
wait_for 15 sh -c "! kill -0 $APP" || fail "did not quit on SIGTERM"
wait "$APP" && RC=0 || RC=$?
[ "$RC" = 0 ] || fail "exit code $RC after SIGTERM"
echo "desktop smoke: 5 passed, 0 failed"
