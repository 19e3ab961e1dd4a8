"""The setup helpers: which requirements are missing (scripts/missing_requirements.py), linking src/ into an
environment without a build (scripts/link_source.py), and extracting upstream's problems from a path or a clone
URL (scripts/fetch_upstream.sh, run from a copy in a temporary folder so that the checkout's upstream/ is never
touched). scripts/setup.sh itself was run by hand in clones (see its header for the cases)."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MISSING = load("missing_requirements")
LINK = load("link_source")


# ---------------------------------------------------------------------------------------------------------
# missing_requirements.py


def test_requirements_of_the_base_and_the_extras():
    project = {"dependencies": ["torch>=2.1", "numpy"], "optional-dependencies": {"a": ["numpy", "x"], "b": ["y"]}}
    assert MISSING.requirements(project, []) == ["torch>=2.1", "numpy"]
    assert MISSING.requirements(project, ["a", "b"]) == ["torch>=2.1", "numpy", "x", "y"]
    with pytest.raises(KeyError, match="no extra c"):
        MISSING.requirements(project, ["c"])


def test_unmet_requirements():
    assert MISSING.unmet(["pytest", "pytest>=1", 'surely-absent-pkg-kj; python_version < "3"']) == []
    assert MISSING.unmet(["surely-absent-pkg-kj", "pytest>=999", "pytest"]) == ["surely-absent-pkg-kj", "pytest>=999"]


def test_this_projects_requirements_are_read(capsys):
    assert MISSING.main(["test"]) == 0      # this test runs with the test extra installed
    assert capsys.readouterr().out == ""
    assert MISSING.main(["no-such-extra"]) == 3


# ---------------------------------------------------------------------------------------------------------
# link_source.py


def test_link_writes_what_an_editable_install_would(tmp_path):
    site, scripts = tmp_path / "site-packages", tmp_path / "bin"
    site.mkdir()
    scripts.mkdir()
    written = LINK.link(site, scripts, sys.executable)
    version = LINK.project_version()
    assert (site / "__link_kerneljudge.pth").read_text() == f"{ROOT / 'src'}\n"
    dist = site / f"kerneljudge-{version}.dist-info"
    assert f"Version: {version}" in (dist / "METADATA").read_text()
    assert "kerneljudge = kerneljudge.cli.main:main" in (dist / "entry_points.txt").read_text()
    command = scripts / "kerneljudge"
    assert os.access(command, os.X_OK) and command.read_text().startswith(f"#!{sys.executable}\n")
    record = (dist / "RECORD").read_text().splitlines()
    assert len(record) == len(written) and record[-1].endswith("RECORD,,")
    for line in record[:-1]:
        rel, digest, size = line.split(",")
        data = (site / rel).read_bytes()
        assert digest == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert int(size) == len(data)
    assert all(Path(p).is_relative_to(tmp_path) for p in written)   # nothing goes into the source tree
    help_text = subprocess.run([str(command), "--help"], capture_output=True, text=True, timeout=120)
    assert help_text.returncode == 0 and "usage: kerneljudge" in help_text.stdout


def test_link_refuses_outside_a_virtual_environment(monkeypatch, capsys):
    monkeypatch.setattr(sys, "prefix", sys.base_prefix)
    assert LINK.main() == 2
    assert "virtual environment" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------------------
# fetch_upstream.sh


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main",
                           *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def kernelbench(tmp_path: Path) -> Path:
    """A small KernelBench-shaped repository: KernelBench/level1..3 with one problem file each."""
    repo = tmp_path / "kb"
    for level in (1, 2, 3):
        folder = repo / "KernelBench" / f"level{level}"
        folder.mkdir(parents=True)
        (folder / f"1_p{level}.py").write_text(f"X = {level}\n")
    git("init", "-q", str(repo))
    git("add", ".", cwd=repo)
    git("commit", "-q", "-m", "problems", cwd=repo)
    return repo


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A stand-in checkout holding only the script, so it writes upstream/ there."""
    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "fetch_upstream.sh", root / "scripts")
    return root


def fetch(checkout: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    run_env = {k: v for k, v in os.environ.items() if k != "KERNELBENCH_MIRROR"}
    return subprocess.run(["bash", str(checkout / "scripts" / "fetch_upstream.sh"), *args], capture_output=True,
                          text=True, timeout=120, env={**run_env, **(env or {})})


def extracted(checkout: Path) -> list[str]:
    base = checkout / "upstream" / "KernelBench"
    return sorted(str(p.relative_to(base)) for p in base.rglob("*.py"))


def test_fetch_from_a_clone_a_bare_mirror_and_a_url(kernelbench, checkout, tmp_path):
    head = git("rev-parse", "HEAD", cwd=kernelbench)
    done = fetch(checkout, str(kernelbench))
    assert done.returncode == 0, done.stderr
    assert extracted(checkout) == ["level1/1_p1.py", "level2/1_p2.py", "level3/1_p3.py"]
    assert (checkout / "upstream" / "KernelBench" / "COMMIT").read_text().strip() == head
    # a file upstream removed does not linger from the earlier extraction
    git("rm", "-q", "KernelBench/level2/1_p2.py", cwd=kernelbench)
    (kernelbench / "KernelBench" / "level2").mkdir(exist_ok=True)   # git rm took the emptied folder
    (kernelbench / "KernelBench" / "level2" / "2_new.py").write_text("Y = 2\n")
    git("add", ".", cwd=kernelbench)
    git("commit", "-q", "-m", "renamed", cwd=kernelbench)
    bare = tmp_path / "mirror.git"
    git("clone", "-q", "--bare", str(kernelbench), str(bare))
    done = fetch(checkout, str(bare))
    assert done.returncode == 0, done.stderr
    assert extracted(checkout) == ["level1/1_p1.py", "level2/2_new.py", "level3/1_p3.py"]
    # a URL is cloned (shallow) into a temporary folder; $KERNELBENCH_MIRROR is the default
    shutil.rmtree(checkout / "upstream")
    done = fetch(checkout, env={"KERNELBENCH_MIRROR": f"file://{bare}"})
    assert done.returncode == 0, done.stderr
    assert "cloning file://" in done.stderr and "2_new.py" in " ".join(extracted(checkout))


def test_fetch_refuses_what_it_cannot_use(kernelbench, checkout, tmp_path):
    done = fetch(checkout, str(tmp_path / "nowhere"))
    assert done.returncode == 3 and "does not exist and is not a URL" in done.stderr
    done = fetch(checkout, f"file://{tmp_path / 'nowhere'}")
    assert done.returncode == 3 and "could not clone" in done.stderr
    git("rm", "-q", "-r", "KernelBench/level3", cwd=kernelbench)
    git("commit", "-q", "-m", "no level3", cwd=kernelbench)
    done = fetch(checkout, str(kernelbench))
    assert done.returncode == 3 and "has no KernelBench/level3" in done.stderr
    assert not (checkout / "upstream").exists()
