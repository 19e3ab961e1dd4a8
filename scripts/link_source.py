"""Make this checkout's src/ importable in the running environment without pip building anything: the last
resort of scripts/setup.sh on a machine with no package index whose setuptools cannot build an editable wheel
(before 64 it has no editable builds at all; before 70.1 it needs the `wheel` package).

    .venv/bin/python scripts/link_source.py

Writes, into the environment's site-packages, what an editable install would: a .pth file that puts src/ on
sys.path, and a dist-info folder (METADATA, entry_points.txt, INSTALLER, RECORD) so that importlib.metadata and
pip see kerneljudge and `pip uninstall kerneljudge` removes it all; and the `kerneljudge` command in the
environment's bin/. Nothing is written into the source tree: the box a solution runs in may read src/kerneljudge
only, and an egg-info beside it (what `setup.py develop` leaves) breaks every import of pkg_resources there.
Run it with the environment's own interpreter; it refuses to write outside a virtual environment.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import stat
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = "kerneljudge"


def project_version() -> str:
    """The version in src/kerneljudge/__init__.py (read as text: nothing is imported)."""
    text = (ROOT / "src" / NAME / "__init__.py").read_text(encoding="utf-8")
    found = re.search(r'^__version__\s*=\s*"([^"]+)"', text, re.MULTILINE)
    if not found:
        raise SystemExit(f"link_source: no __version__ in src/{NAME}/__init__.py")
    return found.group(1)


def console_script(python: str) -> str:
    return (f"#!{python}\n"
            "import sys\n"
            f"from {NAME}.cli.main import main\n"
            "sys.exit(main())\n")


def record_line(path: Path, base: Path) -> str:
    data = path.read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{os.path.relpath(path, base)},sha256={digest},{len(data)}"


def link(site: Path, scripts: Path, python: str) -> list[Path]:
    """Write the .pth, the dist-info and the command; returns the files written."""
    version = project_version()
    dist_info = site / f"{NAME}-{version}.dist-info"
    dist_info.mkdir(parents=True, exist_ok=True)
    files = {
        site / f"__link_{NAME}.pth": f"{ROOT / 'src'}\n",
        dist_info / "METADATA": f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {version}\n",
        dist_info / "entry_points.txt": f"[console_scripts]\n{NAME} = {NAME}.cli.main:main\n",
        dist_info / "INSTALLER": "scripts/link_source.py\n",
        scripts / NAME: console_script(python),
    }
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    command = scripts / NAME
    command.chmod(command.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    record = dist_info / "RECORD"
    lines = [record_line(p, site) for p in files] + [f"{os.path.relpath(record, site)},,"]
    record.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [*files, record]


def main() -> int:
    if sys.prefix == sys.base_prefix:
        print("link_source: run this with a virtual environment's python (.venv/bin/python)", file=sys.stderr)
        return 2
    paths = sysconfig.get_paths()
    written = link(Path(paths["purelib"]), Path(paths["scripts"]), sys.executable)
    print(f"link_source: {NAME} from {ROOT / 'src'} (editable, no build): {len(written)} files in {sys.prefix}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
