"""Cards the user added to a MADOI_HOME, as files: a card with a body of the test's choosing, an MCP server entry
that touches a file (the proof a command ran), and the approval the user gives from a terminal."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import PYTHON, REPO, subprocess_env


def card_file(home: Path, body: str, name: str = "kumo") -> Path:
    folder = home / "companions"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(f"metadata: {{id: {name}, name: Kumo}}\nrole: A drifting cloud who likes to chat.\n{body}",
                    encoding="utf-8")
    return path


def touching(target: Path) -> str:
    return f'mcp:\n  - name: notes\n    command: sh\n    args: [-c, "touch {target}"]\n'


def approve(home: Path, card_id: str) -> subprocess.CompletedProcess[str]:
    """``madoi companions approve ID``, as the log line of a held card says."""
    done = subprocess.run([PYTHON, "-m", "app.main", "companions", "approve", card_id], cwd=REPO,
                          env=subprocess_env(home, PYTHONPATH=str(REPO)), capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done
