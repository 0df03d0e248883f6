# ruff: noqa
# pyopenjtalk-plus imports sudachipy at its own import, but opens Sudachi's dictionary (sudachidict_core, 193 MB) only
# for use_sudachi_kanji_yomi=True, which Madoi never asks for (app/devices/openjtalk_voice.py says why).
# pyinstaller-hooks-contrib's hook for sudachipy collects every Sudachi dictionary installed; this one (found first:
# packaging/madoi.spec's hookspath) collects sudachipy's own files only.
from PyInstaller.utils.hooks import collect_data_files

datas = collect_data_files("sudachipy")
hiddenimports = ["sudachipy.config", "sudachipy.errors"]
