"""`memeval ARGS` run by the function `python -m memeval` calls, inside the test's own process.

A `memeval` subprocess spends about a second of CPU importing before it reads its first
argument; a command that only parses, validates, reads the store or prints does not need one.
`run_cli_here` takes what `tests.conftest.run_cli` takes and returns what it returns, so a test
keeps its assertions whichever it uses. Keep a subprocess for what only a process of its own
shows: import-time behaviour, signals, child processes, the farm.

What a process of its own would throw away with it is put back after each call: the
environment, the working folder, `sys.argv` and `__main__`; the masking log record factory and
excepthook `main` installs (`memeval.secrets.install_masking`); SIGTERM as Ctrl-C (`run`,
`sweep`); the command modules' consoles, made afresh for each call.
"""

from __future__ import annotations

import importlib
import io
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from types import ModuleType

import pytest
from rich.console import Console

import memeval
from memeval.cli import COMMANDS, main
from tests.conftest import ROOT

ENTRY = Path(memeval.__file__).parent / "__main__.py"


def run_cli_here(
    *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`memeval ARGS` in `cwd` (the checkout unless given) with `env` added to this process's
    environment, as `run_cli` runs it; an exception `main` lets escape fails the test here,
    where a process would have printed its traceback and exited 1."""
    consoles = _command_consoles()
    saved = dict(os.environ)
    factory, sigterm = logging.getLogRecordFactory(), signal.getsignal(signal.SIGTERM)
    stdout, stderr = io.StringIO(), io.StringIO()
    # With no logging set up, a process prints WARNING and above on stderr (logging's last
    # resort); here pytest's own handlers would take them instead.
    printed = logging.StreamHandler(stderr)
    printed.setLevel(logging.WARNING)
    with pytest.MonkeyPatch.context() as patch:
        for name, value in (env or {}).items():
            patch.setenv(name, value)
        patch.chdir(cwd or ROOT)
        # As `python -m memeval` leaves them, so click names the program as it would.
        patch.setattr(sys, "argv", [str(ENTRY), *args])
        patch.setitem(sys.modules, "__main__", _entry_module())
        patch.setattr(sys, "excepthook", sys.excepthook)
        for module, name, console in consoles:
            # rich reads COLUMNS when a console is made, as a process does at import.
            patch.setattr(module, name, Console(stderr=console.stderr))
        logging.root.addHandler(printed)
        try:
            with (
                redirect_stdout(stdout),
                redirect_stderr(stderr),
                pytest.raises(SystemExit) as exited,
            ):
                main()
        finally:
            logging.root.removeHandler(printed)
            logging.setLogRecordFactory(factory)
            signal.signal(signal.SIGTERM, sigterm)
            _restore_environ(saved)
    code = exited.value.code
    if code is not None and not isinstance(code, int):
        stderr.write(f"{code}\n")  # as the interpreter does with `sys.exit("message")`
    returncode = 0 if code is None else code if isinstance(code, int) else 1
    argv = [sys.executable, "-m", "memeval", *args]
    return subprocess.CompletedProcess(argv, returncode, stdout.getvalue(), stderr.getvalue())


def _entry_module() -> ModuleType:
    """What `__main__` is to click in `python -m memeval`: a module of package `memeval`."""
    entry = ModuleType("__main__")
    entry.__package__ = "memeval"
    return entry


def _command_consoles() -> list[tuple[object, str, Console]]:
    """Every command module's module-level consoles. The modules are imported here, before a
    call's environment is applied, so none keeps a width one call's COLUMNS gave it."""
    for entry in COMMANDS.values():
        importlib.import_module(f"memeval.cli.{entry.module}")
    return [
        (module, name, value)
        for key, module in list(sys.modules.items())
        if key.startswith("memeval.cli.")
        for name, value in vars(module).items()
        if isinstance(value, Console)
    ]


def _restore_environ(saved: dict[str, str]) -> None:
    """Variables a command set itself (not through the patch) go too, as with its process."""
    for name in os.environ.keys() - saved.keys():
        del os.environ[name]
    for name, value in saved.items():
        if os.environ.get(name) != value:
            os.environ[name] = value
