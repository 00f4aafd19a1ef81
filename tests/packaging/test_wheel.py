"""What `pip install memeval` puts on sys.path carries memeval's name: nothing it installs may
shadow, or be shadowed by, a project's own generic package (a Celery project's `workers`)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from tests.api.test_readme_example import example

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(out), str(ROOT)],
        check=True, timeout=240,
    )  # fmt: skip
    (found,) = out.glob("memeval-*.whl")
    return found


def test_every_top_level_name_in_the_wheel_is_memevals(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/", 1)[0] for name in archive.namelist()}
    assert tops == {"memeval", "memeval_farm", "memeval-0.1.0.dist-info"}
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    for package in ("memeval/engines", "memeval/scoring", "memeval_farm"):
        assert f"{package}/__init__.py" in names, f"{package} would be a namespace package"
    lua = Path(__file__).resolve().parents[2] / "workers" / "memeval_farm" / "lua"
    for script in sorted(lua.glob("*.lua")):
        assert f"memeval_farm/lua/{script.name}" in names, f"{script.name} is not shipped"
    assert any(name.startswith("memeval/fixtures/lifecycle/") for name in names)


def test_the_readme_example_runs_beside_a_project_with_its_own_workers(
    wheel: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
         str(wheel)],
        check=True, timeout=240,
    )  # fmt: skip
    project = tmp_path / "project"
    (project / "workers").mkdir(parents=True)
    (project / "workers" / "__init__.py").write_text('"""The project\'s own Celery workers."""\n')
    (project / "workers" / "tasks.py").write_text("NAME = 'the project'\n")
    script = project / "main.py"
    script.write_text(
        "from workers.tasks import NAME\n"
        + example()
        + textwrap.dedent(
            """
            import memeval_farm
            assert NAME == "the project"
            assert memeval.__file__.startswith(SITE), memeval.__file__
            assert memeval_farm.__file__.startswith(SITE), memeval_farm.__file__
            """
        ).replace("SITE", repr(str(site)))
    )
    # The installed wheel comes before the checkout's editable path; the project's folder comes
    # first of all, as it does when a user runs their own script.
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(script)], cwd=project, env=env, capture_output=True, text=True,
        timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("composite 0."), done.stdout
