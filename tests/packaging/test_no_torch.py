"""`pip install memeval` brings no torch: not through the embedders' runtime (onnxruntime and
onnx, base dependencies since the int8 tier became the default), nor through anything else
the base install pulls in. The closure starts from pyproject.toml's own list (an editable
install's metadata is as old as its last `pip install`) and goes on through the installed
distributions' metadata, as pip resolves it, with no index reached; the `int8` extra, kept for
the commands earlier versions documented, adds nothing."""

from __future__ import annotations

import tomllib
from importlib import metadata

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import ROOT

HEAVY = {"torch", "tensorflow", "jax", "sentence-transformers", "transformers"}
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def closure(*extras: str) -> set[str]:
    """Every distribution memeval with `extras` needs on this platform."""
    lines = [*PROJECT["dependencies"]]
    for extra in extras:
        lines += PROJECT["optional-dependencies"][extra]
    todo = [req for req in map(Requirement, lines) if applies(req, {""})]
    seen: dict[str, set[str]] = {}  # a distribution -> the extras of it already walked
    while todo:
        req = todo.pop()
        key, wanted = canonicalize_name(req.name), {"", *req.extras}
        if wanted <= seen.get(key, set()):
            continue
        seen[key] = seen.get(key, set()) | wanted
        todo += [
            need
            for need in map(Requirement, metadata.requires(req.name) or [])
            if applies(need, wanted)
        ]
    return set(seen)


def applies(req: Requirement, extras: set[str]) -> bool:
    environment = default_environment()
    return req.marker is None or any(
        req.marker.evaluate({**environment, "extra": extra}) for extra in extras
    )


def test_the_base_install_needs_no_torch():
    needed = closure()
    assert {"onnxruntime", "onnx", "numpy", "tokenizers"} <= needed  # the embedders' runtime
    assert needed & HEAVY == set(), sorted(needed & HEAVY)


def test_the_int8_extra_still_installs_and_adds_nothing():
    assert PROJECT["optional-dependencies"]["int8"] == []
    assert {"onnxruntime>=1.32", "onnx>=1.23"} <= set(PROJECT["dependencies"])
    assert closure("int8") == closure()
