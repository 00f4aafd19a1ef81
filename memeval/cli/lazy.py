"""Commands that are imported only when they run.

Each command module pulls in what its command needs (Celery, SQLAlchemy, the engines, the
report writers); importing all of them made `memeval --help` take seconds. The root group holds
a stand-in per command that carries the command's one-line help, so listing the commands
imports none of them, and a stand-in builds its real command the moment it is invoked.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, NamedTuple

import typer
from typer.core import TyperCommand, TyperGroup, TyperOption

PASSTHROUGH = {"allow_extra_args": True, "ignore_unknown_options": True}


class Entry(NamedTuple):
    """Where a command lives and what `memeval --help` says of it (its help, verbatim)."""

    module: str  # under memeval.cli
    attr: str  # a command function, or a Typer app of subcommands
    help: str
    passthrough: bool = False  # extra arguments go on to the wrapped program


def build(name: str, entry: Entry) -> TyperCommand | TyperGroup:
    """The command as `app.command(name)` or `app.add_typer(sub, name=name)` would make it."""
    target = getattr(importlib.import_module(f"memeval.cli.{entry.module}"), entry.attr)
    holder = typer.Typer(add_completion=False)
    if isinstance(target, typer.Typer):
        holder.add_typer(target, name=name)
    else:
        holder.command(name, context_settings=PASSTHROUGH if entry.passthrough else None)(target)
    return typer.main.get_group(holder).commands[name]  # type: ignore[return-value]


def flags_show_no_type() -> None:
    """A flag takes no value, yet typer's help gives each one a type column (`--keep
    --no-keep <bool>`, `--help <bool>`); every option typer builds, `--help` included, goes
    through this one method, so flags are told apart here rather than option by option."""
    shown = TyperOption.display_type_rich

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        return None if self.is_flag else shown(self, ctx)

    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


class LazyCommand(TyperCommand):
    """A command's name and help until it runs; then the real command parses and invokes."""

    def __init__(self, name: str, entry: Entry) -> None:
        super().__init__(name=name, help=entry.help)
        self.entry = entry

    def make_context(
        self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any
    ) -> Any:
        # The group invokes `sub_ctx.command`, so from here on only the real command is used.
        real = build(self.name or "", self.entry)
        return real.make_context(info_name, args, parent=parent, **extra)


class LazyGroup(TyperGroup):
    """The root group: its commands are the stand-ins of `COMMANDS` (see `lazy_group`)."""

    COMMANDS: Mapping[str, Entry] = {}

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        # Stand-ins as the group's own commands: listing, help and "did you mean" work on them.
        self.commands = {name: LazyCommand(name, entry) for name, entry in self.COMMANDS.items()}


def lazy_group(commands: Mapping[str, Entry]) -> type[LazyGroup]:
    """A root group class serving `commands` (Typer takes a class, not an instance)."""
    return type("MemevalGroup", (LazyGroup,), {"COMMANDS": dict(commands)})
