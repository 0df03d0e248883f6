"""What the PyInstaller bundle leaves out: files PyInstaller's analysis collects that Madoi never loads.

PySide6's hooks collect every Qt plug-in of the modules in use, and each plug-in's libraries with it: the virtual
keyboard plug-in brings Qt Quick and QML (about 16 MB), the PDF image format brings Qt Pdf. Madoi uses QtCore,
QtGui, QtWidgets and QtSvg (widgets, no QML), loads no Qt translation, and runs on X11 or Wayland (xcb, wayland),
offscreen or minimal; OpenCV's own Qt 5 window plug-ins and fonts (``cv2/qt``) serve ``cv2.imshow``, which Madoi
never calls (its window is PySide6's). ``madoi.spec`` filters its analysis through :func:`left_out`, and shares
one OpenBLAS between OpenCV and faiss (:func:`shared_copies`);
tests/packaging checks that the bundle still starts, shows its window and searches without them.
"""

from __future__ import annotations

import importlib.util
import os
import posixpath
import re
import shutil
import struct
import subprocess
from collections.abc import Callable
from pathlib import Path

# Qt libraries needed only by the plug-ins left out below.
# Qt Network: Madoi imports no PySide6.QtNetwork (its HTTP is httpx), so neither the module nor its TLS and network
# information plug-ins are loaded.
_UNUSED_QT_LIBRARY = re.compile(
    r"^(lib)?Qt6(Quick|Qml|QmlModels|QmlMeta|QmlWorkerScript|VirtualKeyboard|VirtualKeyboardQml|Pdf"
    r"|EglFSDeviceIntegration|EglFsKmsSupport|Network)(\.so(\.\d+)*|\.dll|\.dylib)?$"
)
_UNUSED_PYSIDE_MODULE = re.compile(r"^QtNetwork\.(abi3\.so|pyd|pyi)$")  # PySide6's binding of Qt Network
# Plug-in folders of Qt for devices without a window system (evdev input, EGL full-screen), and Qt Network's (TLS
# back ends, network reachability).
_UNUSED_PLUGIN_FOLDERS = {"generic", "egldeviceintegrations", "tls", "networkinformation"}
# Single plug-ins: full-screen and remote platforms, the QML virtual keyboard, PDF pages as images, and the GTK 3
# platform theme: it pulls in GTK, GDK, cairo, pango, ATK and their X libraries (~17 MB) for GTK's file dialogs and
# GTK's font and palette on a GNOME desktop; without it Qt's own GNOME theme (D-Bus, no GTK) and the portal theme
# serve, and Madoi's style sheets draw the window.
# Image formats no picture of Madoi's comes in (TIFF, TGA, WBMP, macOS icons; PNG is Qt's own, and SVG, JPEG, GIF,
# WebP and ICO stay for avatars a user brings). Wayland: the server-buffer integrations, which only a Qt-based
# compositor offers, and the in-vehicle (IVI) and kiosk (fullscreen-shell) shells; xdg-shell is what desktops use.
_UNUSED_PLUGINS = re.compile(
    r"^(lib)?(qeglfs|qlinuxfb|qvnc|qvkkhrdisplay|qminimalegl|qtvirtualkeyboardplugin|qpdf|qgtk3"
    r"|qtiff|qtga|qwbmp|qicns|dmabuf-server|drm-egl-server|shm-emulation-server|vulkan-server|ivi-shell"
    r"|fullscreen-shell-v1)\.(so|dll|dylib)$"
)


_QT_CATALOGUES_KEPT = frozenset({"qtbase_ja.qm"})  # a message box's standard buttons in Japanese


# OpenCV's and faiss's wheels each carry OpenBLAS (39 MB each, the same release: pthreads and OpenMP builds of one
# API). OpenCV gets a link to faiss's copy. That copy finds its Fortran and OpenMP runtimes beside the path it was
# loaded from ($ORIGIN: OpenCV's folder), so they are linked there too, in place of OpenCV's own.
_OPENCV_BLAS = re.compile(r"^opencv_python\.libs/libopenblasp?-r0-[0-9a-f]+\.(?P<version>[\d.]+)\.so$")
_FAISS_BLAS = re.compile(r"^faiss_cpu\.libs/libopenblas[op]?-r0-[0-9a-f]+\.(?P<version>[\d.]+)\.so$")
_FAISS_RUNTIME = re.compile(r"^faiss_cpu\.libs/(?P<name>lib(gfortran|quadmath|gomp)-[0-9a-f]+\.so[\d.]*)$")

Entry = tuple[str, str, str]  # PyInstaller's (where in the bundle, source, type)

# llama.cpp's libraries the model runner loads: llama_cpp opens lib/libllama.so, which names the others by soname.
# Not libmtmd (llama_cpp.mtmd_cpp, images and audio for multimodal models; the runner serves text models only).
LLAMA_CPP_LIBRARIES = ("llama", "ggml", "ggml-base", "ggml-cpu")


def llama_cpp_binaries() -> list[tuple[str, str]]:
    """(source, folder in the bundle) of llama.cpp's libraries, one copy each: the wheel has libX.so, libX.so.0 and
    libX.so.0.x.y as three copies of one file; the bundle takes the .so.0 that the others name (NEEDED)."""
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        return []
    lib = Path(next(iter(spec.submodule_search_locations))) / "lib"
    return [(str(lib / f"lib{name}.so.0"), "llama_cpp/lib") for name in LLAMA_CPP_LIBRARIES
            if (lib / f"lib{name}.so.0").is_file()]


def llama_cpp_links(binaries: list[Entry]) -> list[Entry]:
    """``binaries`` with the unversioned names llama_cpp opens (lib/libllama.so) as links to the .so.0 copies, and
    the other names of the same libraries (a second or third copy) left out."""
    names = {dest.replace("\\", "/") for dest, _, _ in binaries}
    kept = [entry for entry in binaries if not _LLAMA_CPP_COPY.match(entry[0].replace("\\", "/"))]
    return kept + [(f"llama_cpp/lib/lib{name}.so", f"lib{name}.so.0", "SYMLINK") for name in ("llama",)
                   if f"llama_cpp/lib/lib{name}.so.0" in names]


_LLAMA_CPP_COPY = re.compile(r"^llama_cpp/lib/lib[\w-]+\.so(\.\d+\.\d+\.\d+)?$")  # libX.so, libX.so.0.x.y


def shared_copies(binaries: list[Entry]) -> list[Entry]:
    """``binaries`` with OpenCV's OpenBLAS replaced by a link to faiss's (when both are there, of one release)."""
    names = [dest.replace("\\", "/") for dest, _, _ in binaries]
    faiss = {m["version"]: name for name in names if (m := _FAISS_BLAS.match(name))}
    opencv = [(name, m["version"]) for name in names if (m := _OPENCV_BLAS.match(name))]
    if len(opencv) != 1 or opencv[0][1] not in faiss:
        return binaries
    links = {opencv[0][0]: faiss[opencv[0][1]]}
    links |= {f"opencv_python.libs/{m['name']}": name for name in names if (m := _FAISS_RUNTIME.match(name))}
    kept = [entry for entry, name in zip(binaries, names, strict=True) if name not in links]
    return kept + [(link, posixpath.relpath(target, posixpath.dirname(link)), "SYMLINK")
                   for link, target in links.items()]


def left_out(dest: str) -> bool:
    """Whether the bundle leaves out the file that PyInstaller would put at ``dest`` (relative to the bundle)."""
    parts = dest.replace("\\", "/").split("/")
    name = parts[-1]
    if parts[0] == "cv2" and len(parts) > 2 and parts[1] == "qt":
        return True
    if _UNUSED_QT_LIBRARY.match(name):  # in PySide6/Qt/lib, or PyInstaller's link to it at the top
        return True
    if parts[0] != "PySide6":
        return False
    if len(parts) == 2 and _UNUSED_PYSIDE_MODULE.match(name):
        return True
    if "translations" in parts[:-1]:  # Qt's own texts: only in the interface's languages (ui/window/i18n.py)
        return name not in _QT_CATALOGUES_KEPT
    if "plugins" in parts[:-1]:
        folder = parts[parts.index("plugins") + 1] if len(parts) > parts.index("plugins") + 2 else ""
        return folder in _UNUSED_PLUGIN_FOLDERS or bool(_UNUSED_PLUGINS.match(name))
    return False


def only_needed_by(left: list[Entry], kept: list[Entry], needed: Callable[[str], list[str]]) -> set[str]:
    """The top-level libraries of ``kept`` (those PyInstaller collected as dependencies) that only the ``left``
    out binaries need, directly or through each other: left out with them (the GTK 3 theme's GTK, cairo, pango).
    ``needed(source)`` is a binary's DT_NEEDED names. A library something kept needs stays, as does any library
    nothing left out needs (one that is loaded by name at run time, as sounddevice loads PortAudio)."""
    by_name: dict[str, list[Entry]] = {}
    for entry in kept:
        by_name.setdefault(posixpath.basename(entry[0].replace("\\", "/")), []).append(entry)

    def reached(starts: list[Entry]) -> set[str]:
        seen: set[str] = set()
        todo = [name for entry in starts if entry[2] != "SYMLINK" for name in needed(entry[1])]
        while todo:
            name = todo.pop()
            if name in seen or name not in by_name:
                continue
            seen.add(name)
            todo += [n for entry in by_name[name] if entry[2] != "SYMLINK" for n in needed(entry[1])]
        return seen

    candidates = {name for name in reached(left) if all("/" not in e[0].replace("\\", "/") for e in by_name[name])}
    roots = [entry for entry in kept if posixpath.basename(entry[0].replace("\\", "/")) not in candidates]
    return candidates - reached(roots)


def elf_needed(path: str) -> list[str]:
    """A shared library's DT_NEEDED names (``readelf -d``; none for a file that is not ELF, or without binutils)."""
    try:
        out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=False).stdout
    except OSError:
        return []
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


# Stripping (Linux): the symbol tables and debug sections of libpython (23 MB -> 6 MB) and of the extension modules
# go. Not the libraries auditwheel put in a wheel's ``<dist>.libs`` folder: patchelf rewrote those, and stripped
# they may no longer load (numpy's OpenBLAS: "ELF load command address/offset not page-aligned"). Every stripped
# file is checked for that fault before it replaces the original; tests/packaging loads each library of the bundle.
def strip_candidate(rel: str) -> bool:
    """Whether the file at ``rel`` (relative to the bundle's ``_internal``) is stripped."""
    parts = rel.replace("\\", "/").split("/")
    return not any(part.endswith(".libs") for part in parts[:-1])


def loads_aligned(path: Path) -> bool:
    """Whether every loadable segment of the ELF file keeps its offset and address congruent modulo the page size
    (what glibc's loader checks; a strip of a patchelf'd file can break it)."""
    data = path.read_bytes()[:65536]
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:  # 64-bit little-endian only
        return False
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, _, _, p_align = struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize)
        if p_type == 1 and ((p_vaddr - p_offset) % 4096 or p_align % 4096):
            return False
    return True


def strip_bundle(internal: Path) -> list[tuple[str, int, int]]:
    """Strips the ELF shared libraries under ``internal`` that :func:`strip_candidate` allows and that still load
    aligned stripped: (path relative to ``internal``, bytes before, bytes after) of each one stripped."""
    done = []
    for path in sorted(internal.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        rel = path.relative_to(internal).as_posix()
        with path.open("rb") as file:
            head = file.read(18)
        if head[:4] != b"\x7fELF" or head[16] != 3 or not strip_candidate(rel):  # ET_DYN: a shared object
            continue
        trial = path.with_name(path.name + ".stripped")
        result = subprocess.run(["strip", "--strip-unneeded", "-o", str(trial), str(path)], capture_output=True,
                                check=False)
        before = path.stat().st_size
        if result.returncode == 0 and trial.stat().st_size < before and loads_aligned(trial):
            shutil.copymode(path, trial)
            os.replace(trial, path)
            done.append((rel, before, path.stat().st_size))
        else:
            trial.unlink(missing_ok=True)
    return done
