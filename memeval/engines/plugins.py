"""Engines that live outside memeval: `--engine package.module:Class`, or a package that
registers names under the `memeval.engines` entry-point group, e.g. in its pyproject:

    [project.entry-points."memeval.engines"]
    mine = "my_package.engine:MyEngine"

Either way the class must subclass `memeval.engines.base.Engine`. Loading happens in each
worker, by the same reference the run was given, so the package must be installed wherever a
worker runs. Every failure is a `UsageError` that says what to install or fix.
"""

from __future__ import annotations

import importlib
import re
from importlib.metadata import EntryPoint, entry_points

from memeval.engines.base import Engine
from memeval.errors import UsageError

GROUP = "memeval.engines"
TARGET = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def is_target(name: str) -> bool:
    return ":" in name


def load_class(target: str) -> type[Engine]:
    """`package.module:Class` (a nested `Outer.Inner` works too) as an Engine subclass."""
    if not TARGET.match(target):
        raise UsageError(
            f"cannot read engine `{target}`",
            fix="name a plugin as package.module:Class, e.g. my_pkg.engine:MyEngine",
        )
    module_name, _, attr_path = target.partition(":")
    try:
        found: object = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(
            f"engine `{target}`: cannot import `{module_name}` ({exc})",
            fix="install the package that provides it in every worker, or fix PYTHONPATH",
        ) from None
    for part in attr_path.split("."):
        if not hasattr(found, part):
            raise UsageError(
                f"engine `{target}`: `{module_name}` has no `{attr_path}`",
                fix="check the class name after the colon",
            )
        found = getattr(found, part)
    return _engine_class(found, target)


def entry_points_by_name() -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def load_entry_point(ep: EntryPoint) -> type[Engine]:
    try:
        found = ep.load()
    except Exception as exc:  # a broken plug-in must not take the whole registry down
        raise UsageError(
            f"engine `{ep.name}` (entry point {ep.value}) failed to load: "
            f"{type(exc).__name__}: {exc}",
            fix=f"reinstall the package that registers `{ep.name}` under `{GROUP}`",
        ) from None
    return _engine_class(found, f"{ep.name} ({ep.value})")


def _engine_class(found: object, label: str) -> type[Engine]:
    if not (isinstance(found, type) and issubclass(found, Engine)):
        raise UsageError(
            f"engine `{label}` is not a memeval engine class",
            fix="point at a subclass of memeval.engines.base.Engine",
        )
    return found
