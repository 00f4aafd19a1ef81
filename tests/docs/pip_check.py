"""`pip install SPEC...` as a docs block types it, checked instead of run: the test's
environment is the fresh install, so each SPEC (`.` and `.[extra]` name memeval, as typed in a
clone) must already be satisfied, extras included. Nothing is downloaded or changed."""

from __future__ import annotations

import sys
from importlib import metadata

from packaging.requirements import Requirement


def missing(spec: str) -> list[str]:
    """What `spec` needs that this environment lacks."""
    if spec == "." or spec.startswith(".["):
        spec = "memeval" + spec[1:]
    wanted = Requirement(spec)
    try:
        dist = metadata.distribution(wanted.name)
    except metadata.PackageNotFoundError:
        return [wanted.name]
    lacking = [] if wanted.specifier.contains(dist.version, prereleases=True) else [spec]
    provided = set(dist.metadata.get_all("Provides-Extra") or [])
    lacking += [f"{wanted.name} has no extra `{e}`" for e in sorted(wanted.extras - provided)]
    for line in dist.requires or []:
        need = Requirement(line)
        if need.marker is None or not any(
            need.marker.evaluate({"extra": extra}) for extra in wanted.extras
        ):
            continue
        try:
            version = metadata.version(need.name)
        except metadata.PackageNotFoundError:
            lacking.append(str(need))
            continue
        if not need.specifier.contains(version, prereleases=True):
            lacking.append(f"{need} ({version} installed)")
    return lacking


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "install":
        print(f"docs-run: only `pip install` is checked here, not `pip {' '.join(argv)}`")
        return 2
    specs = [a for a in argv[1:] if not a.startswith("-")]
    for spec in specs:
        lacking = missing(spec)
        if lacking:
            print(f"docs-run: `pip install {spec}` would install: {', '.join(lacking)}")
            return 1
        print(f"docs-run: {spec} is installed here (pip not run)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
