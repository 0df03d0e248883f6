"""Data shipped with Madoi: companion cards, prompts, icons, style sheets and sample knowledge."""

from pathlib import Path

RESOURCES_DIR = Path(__file__).resolve().parent
