"""The user-facing error: what went wrong, where, and how to fix it, never a traceback."""

from __future__ import annotations

from pathlib import Path


class MemevalError(Exception):
    """An error the CLI prints as one clear message and turns into a non-zero exit code."""

    exit_code = 1

    def __init__(self, message: str, *, fix: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def render(self) -> str:
        return self.message + (f"\n  fix: {self.fix}" if self.fix else "")


class UsageError(MemevalError):
    """Bad options or settings: the command line or the environment must change."""

    exit_code = 2


class SuiteError(MemevalError):
    """A suite file that cannot be used, located as precisely as the parser allows."""

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        path: Path | str | None = None,
        line: int | None = None,
        field: str = "",
        fix: str = "",
        more: list[str] | None = None,
    ) -> None:
        super().__init__(message, fix=fix)
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        self.more = more or []

    def at(self, path: Path | str) -> SuiteError:
        self.path = str(path)
        return self

    def render(self) -> str:
        where = self.path or "<suite>"
        if self.line is not None:
            where += f":{self.line}"
        head = f"{where}: " + (f"field `{self.field}`: " if self.field else "") + self.message
        lines = [head, *(f"  also {m}" for m in self.more)]
        if self.fix:
            lines.append(f"  fix: {self.fix}")
        return "\n".join(lines)


class CreditsOut(MemevalError):
    """The engine's account cannot pay for another call: no later case can succeed, so the run
    stops with the cases not yet run marked skipped, to be resumed once it is topped up."""

    exit_code = 6
