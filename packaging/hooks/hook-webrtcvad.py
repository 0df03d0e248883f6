# ruff: noqa
# Madoi installs the voice-activity detector as `webrtcvad-wheels` (the original `webrtcvad` has no wheels since
# 2017). pyinstaller-hooks-contrib's hook for the module copies the metadata of a distribution named `webrtcvad`,
# which is not installed, and the whole build stops. This hook (found first: packaging/madoi.spec's hookspath)
# copies the metadata the module reads for its __version__ instead.
from PyInstaller.utils.hooks import copy_metadata

datas = copy_metadata("webrtcvad-wheels")
