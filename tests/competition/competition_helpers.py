"""Archives of real bots, and crafted hostile ones, for the competition's tests."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MINIMAL = ROOT / "example_bots" / "minimal"
RANDOM = ROOT / "example_bots" / "random"


def bot_files(name: str, source: Path = MINIMAL, *, extra: dict[str, bytes] | None = None) -> dict[str, bytes]:
    toml = (source / "bot.toml").read_text().replace(f'name = "{source.name}"', f'name = "{name}"')
    files = {"bot.toml": toml.encode(), "bot.py": (source / "bot.py").read_bytes()}
    return files | (extra or {})


def tar_gz(files: dict[str, bytes], top: str | None = None) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"{top}/{name}" if top else name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def zipped(files: dict[str, bytes], top: str | None = None) -> bytes:
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(f"{top}/{name}" if top else name, data)
    return raw.getvalue()


def write_config(path: Path, text: str = "") -> Path:
    path.write_text('[game]\nsandbox = "limits"\n' + text)
    return path
