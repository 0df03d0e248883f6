#!/usr/bin/env bash
# Builds a Debian package from the PyInstaller bundle (see packaging/README.md):
#   /opt/madoi/                     the bundle (madoi, madoi-gui, _internal/)
#   /usr/bin/madoi, madoi-gui       links into it
#   /usr/share/applications/madoi.desktop, /usr/share/icons/hicolor/{scalable,256x256}/apps/madoi.{svg,png}
# Usage: packaging/build-deb.sh [BUNDLE_DIR [OUT_DIR]]      (defaults: dist/madoi and dist)
# MADOI_DEB_COMPRESSION=xz|zstd|gzip|none picks dpkg-deb's compression (default xz: the smallest file, and the
# slowest to build; tests use none); MADOI_DEB_MAINTAINER sets the Maintainer field. Prints the .deb's path.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
bundle="$(realpath "${1:-$repo/dist/madoi}")"
out="$(realpath -m "${2:-$repo/dist}")"
compression="${MADOI_DEB_COMPRESSION:-xz}"
python="${PYTHON:-$repo/.venv/bin/python}"
[ -x "$python" ] || python=python3

if [ ! -x "$bundle/madoi" ]; then
  echo "build-deb: no bundle at $bundle; build it first: pyinstaller --noconfirm packaging/madoi.spec" >&2
  exit 1
fi
version="$("$bundle/madoi" --version | awk '{print $2}')"
arch="$(dpkg --print-architecture)"
root="$(mktemp -d "${TMPDIR:-/tmp}/madoi-deb.XXXXXX")"
trap 'rm -rf "$root"' EXIT
chmod 755 "$root"  # it becomes the package's "/": mktemp's 0700 would be written over the system's

mkdir -p "$root/DEBIAN" "$root/opt" "$root/usr/bin" "$root/usr/share/applications" \
  "$root/usr/share/icons/hicolor/scalable/apps" "$root/usr/share/icons/hicolor/256x256/apps"
# Hard links when the bundle is on the same file system (no second copy of ~800 MB), a copy otherwise.
cp -al "$bundle" "$root/opt/madoi" 2>/dev/null || { rm -rf "$root/opt/madoi"; cp -a "$bundle" "$root/opt/madoi"; }
ln -s /opt/madoi/madoi "$root/usr/bin/madoi"
ln -s /opt/madoi/madoi-gui "$root/usr/bin/madoi-gui"
cp "$repo/resources/icons/madoi.svg" "$root/usr/share/icons/hicolor/scalable/apps/madoi.svg"
cp "$repo/resources/icons/madoi-256.png" "$root/usr/share/icons/hicolor/256x256/apps/madoi.png"
# The same entry `madoi --install-desktop-entry` writes, for the system: the linked program, the themed icon.
PYTHONPATH="$repo" "$python" -c '
import sys
from pathlib import Path
from app.runtime.desktop_entry import desktop_entry_text
sys.stdout.write(desktop_entry_text(["/usr/bin/madoi-gui"], Path("madoi")))
' > "$root/usr/share/applications/madoi.desktop"
chmod 644 "$root/usr/share/applications/madoi.desktop"

installed_kb="$(du -sk --apparent-size "$root" | cut -f1)"
cat > "$root/DEBIAN/control" <<EOF
Package: madoi
Version: $version
Architecture: $arch
Maintainer: ${MADOI_DEB_MAINTAINER:-Madoi developers <madoi@invalid>}
Installed-Size: $installed_kb
Section: net
Priority: optional
Depends: libc6, libxcb1, libgl1, libegl1, libespeak-ng1
Recommends: fonts-noto-cjk, libwayland-client0, pipewire-bin | pulseaudio-utils | alsa-utils
Description: several AI companions in one desktop window
 Madoi (円居) is a desktop app in which several AI companions talk with you and
 with each other, see through the webcam, speak aloud (espeak-ng) and search
 what they know. Self-contained build (Python, Qt, OpenCV and the search model
 inside /opt/madoi); it needs a language model server or an API key to talk.
EOF
# Desktop menus and icon caches pick the new files up on their own on current desktops; refresh the caches
# where the tools exist.
cat > "$root/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e
if command -v update-desktop-database >/dev/null 2>&1; then update-desktop-database -q /usr/share/applications || true; fi
if command -v gtk-update-icon-cache >/dev/null 2>&1; then gtk-update-icon-cache -q -t /usr/share/icons/hicolor || true; fi
EOF
cp "$root/DEBIAN/postinst" "$root/DEBIAN/postrm"
chmod 755 "$root/DEBIAN/postinst" "$root/DEBIAN/postrm"

mkdir -p "$out"
deb="$out/madoi_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Z"$compression" --build "$root" "$deb" >/dev/null
echo "$deb"
