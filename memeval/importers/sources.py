"""`--suite locomo:PATH` and `--suite longmemeval:PATH`: a benchmark file read at run time.

The one hook the suite catalogue calls: a spec naming a known benchmark becomes its cases,
built in memory from the user's copy after its hash is checked. A hash that is not pinned is
printed as a warning on stderr and the run goes on.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import NamedTuple
from urllib.parse import parse_qsl

import yaml

from memeval.errors import UsageError
from memeval.importers import locomo, longmemeval
from memeval.importers.pinning import Pin, check_pins, sha256_of
from memeval.suites.scenario import Scenario


def _locomo(path: Path, options: dict[str, str]) -> Iterator[Scenario]:
    counted = locomo.COUNTED
    if "categories" in options:
        counted = locomo.parse_categories(options["categories"])
    return (locomo.scenario(conv, counted) for conv in locomo.conversations(path))


def _longmemeval(path: Path, options: dict[str, str]) -> Iterator[Scenario]:
    return (
        longmemeval.scenario(inst, path, n) for n, inst in enumerate(longmemeval.instances(path))
    )


Loader = Callable[[Path, dict[str, str]], Iterator[Scenario]]
BENCHMARKS: dict[str, tuple[Loader, tuple[Pin, ...]]] = {
    "locomo": (_locomo, locomo.PINS),
    "longmemeval": (_longmemeval, longmemeval.PINS),
}
OPTIONS = {"locomo": ("categories",), "longmemeval": ()}
"""What `NAME:PATH?option=value` may set, per benchmark."""


def is_benchmark(suite: str) -> bool:
    """Whether a run's suite is a benchmark read at run time (`locomo:PATH`), as stored."""
    name, colon, _ = suite.partition(":")
    return bool(colon) and name in BENCHMARKS


class Source(NamedTuple):
    name: str
    path: Path
    options: dict[str, str]


def parse(spec: str) -> Source | None:
    """`NAME:PATH[?option=value]` for a known benchmark name, else None (an ordinary suite
    spec). LoCoMo takes `categories=1,2,3,4,5` to count the adversarial category too."""
    name, colon, rest = spec.partition(":")
    if not colon or name not in BENCHMARKS:
        return None
    rest, _, query = rest.partition("?")
    options = dict(parse_qsl(query))
    unknown = sorted(set(options) - set(OPTIONS[name]))
    if unknown:
        allowed = ", ".join(OPTIONS[name]) or "none"
        raise UsageError(
            f"`--suite {spec}`: {name} takes no option {', '.join(unknown)}",
            fix=f"options {name} takes: {allowed}",
        )
    if not rest:
        raise UsageError(
            f"`--suite {spec}` names no file", fix=f"write {name}:PATH to your local copy"
        )
    path = Path(rest).expanduser()
    if not path.is_file():
        raise UsageError(
            f"{name} file `{rest}` does not exist",
            fix=f"give the path of your own copy of the {name} data (it is not shipped)",
        )
    return Source(name, path, options)


def warning(name: str, path: Path) -> str | None:
    pins = BENCHMARKS[name][1]
    if pins:
        return check_pins(path, pins)
    return f"{path}: no pinned sha256 is known for {name}; this copy's is {sha256_of(path)}"


def load(name: str, path: Path, options: dict[str, str] | None = None) -> Iterator[Scenario]:
    """The benchmark's cases as they are read, after its hash is checked (a mismatch only
    warns, on stderr). A run reads its file more than once (to plan, to send, to resume), so
    each copy is hashed and warned about once a process."""
    stat = path.stat()
    note = _checked(name, path.resolve(), stat.st_size, stat.st_mtime_ns)
    if note:
        print(f"warning: {note}", file=sys.stderr)
    return BENCHMARKS[name][0](path, options or {})


_CHECKED: set[tuple[str, Path, int, int]] = set()


def _checked(name: str, path: Path, size: int, mtime_ns: int) -> str | None:
    """The warning for a copy not seen before in this process, else None."""
    if (name, path, size, mtime_ns) in _CHECKED:
        return None
    note = warning(name, path)
    _CHECKED.add((name, path, size, mtime_ns))
    return note


def write(cases: Iterable[Scenario], folder: Path) -> list[Path]:
    """One YAML file per case, in the shape `memeval suites validate` and `--suite` read,
    each written as soon as it is read, so an import holds one case at a time."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create `{folder}`: {exc}", fix="give a writable folder") from None
    paths = []
    for case in cases:
        data = {"kind": case.kind, **case.model_dump(mode="json", exclude_defaults=True)}
        target = folder / f"{case.name}.yaml"
        target.write_text(
            yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100), encoding="utf-8"
        )
        paths.append(target)
    return paths
