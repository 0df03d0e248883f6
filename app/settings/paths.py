"""Where Madoi keeps its files: the config directory (settings, cards) and the data directory (conversations, log),
both under ``MADOI_HOME`` when it is set."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import platformdirs

APP_NAME: Final = "madoi"
SETTINGS_FILE: Final = "settings.toml"


@dataclass(frozen=True)
class Paths:
    """Where Madoi keeps its files."""

    config_dir: Path
    data_dir: Path

    @property
    def settings_file(self) -> Path:
        return self.config_dir / SETTINGS_FILE

    @property
    def database(self) -> Path:
        return self.data_dir / "madoi.sqlite3"

    @property
    def log_file(self) -> Path:
        return self.data_dir / "madoi.log"

    @property
    def cards_dir(self) -> Path:
        return self.config_dir / "companions"

    def ensure(self) -> Paths:
        """Creates both directories readable by the user only, and tightens files an older Madoi left readable
        by others (app/storage/private_files.py)."""
        from app.storage.private_files import private_dir, tighten

        private_dir(self.config_dir)
        private_dir(self.data_dir)
        tighten([self.config_dir, self.data_dir])
        return self

    @classmethod
    def resolve(cls, environ: Mapping[str, str] | None = None) -> Paths:
        env = os.environ if environ is None else environ
        home = env.get("MADOI_HOME")
        if home:
            root = Path(home).expanduser()
            return cls(config_dir=root, data_dir=root)
        return cls(
            config_dir=Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)),
            data_dir=Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)),
        )
