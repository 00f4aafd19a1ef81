"""Reads suite files into validated cases, turning every failure into one clear `SuiteError`.

YAML is composed into nodes first so that a pydantic error's location can be traced back to
the line the user must edit.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, Field, TypeAdapter, ValidationError, field_validator

from memeval.errors import SuiteError
from memeval.suites.common import Strict
from memeval.suites.fixture import Fixture, utc
from memeval.suites.scenario import Noise, Scenario

Case = Annotated[Scenario | Fixture, Field(discriminator="kind")]
CASE_ADAPTER: TypeAdapter[Scenario | Fixture] = TypeAdapter(Case)
SUFFIXES = (".yaml", ".yml")

Loc = tuple[str | int, ...]

SETTINGS_FILE = "suite.yaml"
"""A folder's own settings: a file of this name holding one `kind: suite` document."""


class SuiteSettings(Strict):
    """Defaults for the cases of a suite: a `kind: suite` document applies to the cases after it
    in its file, and a folder's `suite.yaml` to every case below the folder. A case's own
    value wins, then the nearest settings."""

    kind: Literal["suite"] = "suite"
    now: datetime | None = Field(
        default=None, description="The evaluation time of every case that names none."
    )
    noise: Noise | None = Field(
        default=None, description="Distractors for every scenario that names none."
    )

    @field_validator("now")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        return utc(value)

    def under(self, inner: SuiteSettings) -> SuiteSettings:
        """`inner`'s values where it has them, these elsewhere."""
        return self.model_copy(update=inner.model_dump(exclude_none=True, exclude={"kind"}))

    def fill(self, data: dict[str, Any]) -> dict[str, Any]:
        """The raw case with the settings as defaults, before validation, so a bad value is
        still reported against the case."""
        out = dict(data)
        if self.now is not None:
            out.setdefault("now", self.now)
        if self.noise is not None and data.get("kind") == "scenario":
            out.setdefault("noise", self.noise.model_dump())
        return out


class Located(BaseModel):
    """A case and where it was read from, so later errors can still name the file."""

    case: Scenario | Fixture
    path: str
    line: int


MAX_FILE_BYTES = 1_000_000
"""Ten times the largest shipped suite file; parsing is linear, so this bounds a file's time."""
MAX_VALUES = 200_000
"""Values a file may stand for once its aliases are written out: a 1.7 KB alias bomb stands
for billions, and expanding it took a minute and 4 GB before failing."""
MAX_TEXT = 4_000_000
"""Characters a file's values may hold once its aliases are written out: four times what a file
may hold without any. Counting values alone let a 900 KB file of long anchored strings stand
for 660 MB, and a 128 KB one take 3.5 GB and a minute to load."""
MAX_DEPTH = 64
"""Nesting levels a suite file may use; the suite models need fewer than ten."""


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Safe YAML (libyaml's parser when installed, five times faster) that leaves timestamps as
    text, so pydantic reports a bad date with its field."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _expanded(
    node: yaml.Node, sizes: dict[int, tuple[int, int]], open_: set[int], depth: int = 0
) -> tuple[int, int]:
    """How many values, and characters of text, `node` stands for with every alias written out,
    counted without writing them out: each distinct node once, so an alias bomb is measured in
    microseconds."""
    known = sizes.get(id(node))
    if known is not None:
        return known
    where = node.start_mark.line + 1
    if id(node) in open_:
        raise SuiteError(
            "an alias refers to a value that contains it", line=where, fix="remove that alias"
        )
    if depth > MAX_DEPTH:
        raise SuiteError(
            f"values are nested deeper than {MAX_DEPTH} levels",
            line=where,
            fix="flatten the structure; suite fields nest only a few levels",
        )
    children: list[yaml.Node] = []
    if isinstance(node, yaml.MappingNode):
        children = [part for pair in node.value for part in pair]
    elif isinstance(node, yaml.SequenceNode):
        children = node.value
    open_.add(id(node))
    parts = [_expanded(child, sizes, open_, depth + 1) for child in children]
    open_.discard(id(node))
    own = len(node.value) if isinstance(node, yaml.ScalarNode) else 0
    total = (1 + sum(v for v, _ in parts), own + sum(c for _, c in parts))
    sizes[id(node)] = total
    return total


def _plain(node: yaml.Node, loc: Loc, lines: dict[Loc, int], build: _Loader) -> Any:
    """Build Python data from a YAML node, recording the line of every path on the way."""
    lines[loc] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = build.construct_object(key_node, deep=True)
            where = key_node.start_mark.line + 1
            if not isinstance(key, str | int) or isinstance(key, bool):
                raise SuiteError(
                    f"the key {key!r} is not a plain name", line=where, fix="use a word"
                )
            if key in out:
                raise SuiteError(f"the key `{key}` appears twice", line=where, fix="keep one")
            out[key] = _plain(value_node, (*loc, key), lines, build)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_plain(item, (*loc, i), lines, build) for i, item in enumerate(node.value)]
    return build.construct_object(node, deep=True)


_FIXES = {
    "extra_forbidden": "remove it or correct its spelling",
    "missing": "add it",
    "datetime_from_date_parsing": "write an ISO 8601 time, e.g. 2026-03-02T09:00:00Z",
    "datetime_parsing": "write an ISO 8601 time, e.g. 2026-03-02T09:00:00Z",
    "datetime_type": "write an ISO 8601 time, e.g. 2026-03-02T09:00:00Z",
    "timezone_aware": "add a zone, e.g. 2026-03-02T09:00:00Z",
    "date_from_datetime_parsing": "write an ISO 8601 date, e.g. 2026-03-02",
    "date_parsing": "write an ISO 8601 date, e.g. 2026-03-02",
    "date_type": "write an ISO 8601 date, e.g. 2026-03-02",
    "time_parsing": "write a time of day, e.g. 09:00",
    "less_than_equal": "use a number no larger than {le}",
    "greater_than_equal": "use a number no smaller than {ge}",
    "string_pattern_mismatch": "use only letters, digits, '.', '_' and '-'",
    "union_tag_invalid": "set `kind` to `scenario` or `fixture`",
    "union_tag_not_found": "add `kind: scenario` or `kind: fixture`",
    "too_short": "add at least one item",
    "string_too_long": "shorten it to at most {max_length} characters",
}


def _describe(error: dict[str, Any], lines: dict[Loc, int]) -> tuple[str, int | None, str]:
    loc: Loc = tuple(error["loc"])
    # A discriminated union puts the tag in the location; the user never wrote it.
    if loc and loc[0] in ("scenario", "fixture"):
        loc = loc[1:]
    field = ""
    for part in loc:
        field += f"[{part}]" if isinstance(part, int) else (f".{part}" if field else str(part))
    line = None
    for i in range(len(loc), -1, -1):
        if loc[:i] in lines:
            line = lines[loc[:i]]
            break
    message = str(error["msg"]).removeprefix("Value error, ")
    fix = _FIXES.get(error["type"], "").format_map(error.get("ctx") or {})
    if error["type"] == "enum":
        fix = f"use one of: {error.get('ctx', {}).get('expected', '')}"
    return field or "(document)", line, message + (f" (fix: {fix})" if fix else "")


def _documents(path: Path) -> Iterator[tuple[Any, dict[Loc, int], int]]:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise SuiteError(
                f"the file has {size:,} bytes; a suite file may have at most {MAX_FILE_BYTES:,}",
                path=path,
                fix="split its cases over several files in one folder and pass the folder",
            )
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"cannot read the file: {exc}", path=path) from None
    values = chars = 0
    try:
        for node in yaml.compose_all(text, Loader=_Loader):
            if node is None:
                continue
            more, longer = _expanded(node, {}, set())
            values, chars = values + more, chars + longer
            if values > MAX_VALUES:
                raise SuiteError(
                    f"the YAML stands for more than {MAX_VALUES:,} values once its aliases "
                    "are expanded (an alias repeats everything its anchor holds)",
                    line=node.start_mark.line + 1,
                    fix="write the repeated parts out, or split the cases over several files",
                )
            if chars > MAX_TEXT:
                raise SuiteError(
                    f"the YAML stands for more than {MAX_TEXT:,} characters of text once its "
                    "aliases are expanded (an alias repeats everything its anchor holds)",
                    line=node.start_mark.line + 1,
                    fix="write the repeated parts out, or split the cases over several files",
                )
            lines: dict[Loc, int] = {}
            yield _plain(node, (), lines, _Loader("")), lines, node.start_mark.line + 1
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise SuiteError(
            f"not valid YAML: {problem}",
            path=path,
            line=mark.line + 1 if mark else None,
            fix="check the indentation and quoting on that line",
        ) from None
    except SuiteError as exc:
        raise exc.at(path) from None
    except (ValueError, TypeError, RecursionError) as exc:
        said = str(exc).split(";")[0]  # not Python's own advice (set_int_max_str_digits)
        raise SuiteError(
            f"unreadable YAML value: {said}", path=path, fix="quote it to keep it as text"
        ) from None


def _validate(
    data: dict[str, Any], lines: dict[Loc, int], path: Path, adapter: TypeAdapter[Any]
) -> Any:
    try:
        return adapter.validate_python(data)
    except ValidationError as exc:
        problems = [_describe(dict(e), lines) for e in exc.errors()]
        field, first_line, message = problems[0]
        more = [f"{f}: {m}" for f, _, m in problems[1:]]
        raise SuiteError(message, path=path, line=first_line, field=field, more=more) from None


SETTINGS_ADAPTER: TypeAdapter[SuiteSettings] = TypeAdapter(SuiteSettings)
DOCUMENT_ADAPTER: TypeAdapter[Scenario | Fixture | SuiteSettings] = TypeAdapter(
    Annotated[Scenario | Fixture | SuiteSettings, Field(discriminator="kind")]
)
"""Any document of a suite file: what `memeval suites schema` publishes."""


def document_schema() -> dict[str, Any]:
    """The JSON Schema of a suite document, with `any_of` alternatives pointing back at the
    check definition (pydantic cannot name a model's own definition while building it)."""
    schema = DOCUMENT_ADAPTER.json_schema()
    check = schema["$defs"]["Check"]
    check["properties"]["any_of"]["items"] = {"$ref": "#/$defs/Check"}
    return schema


def load_file(path: Path, settings: SuiteSettings | None = None) -> list[Located]:
    """Every case in one YAML file; a file may hold several documents separated by `---`."""
    cases: list[Located] = []
    settings = settings or SuiteSettings()
    for data, lines, line in _documents(path):
        if not isinstance(data, dict):
            raise SuiteError(
                "a case must be a mapping with `kind: scenario` or `kind: fixture`",
                path=path,
                line=line,
                fix="start the document with `kind:`",
            )
        if data.get("kind") == "suite":
            settings = settings.under(_validate(data, lines, path, SETTINGS_ADAPTER))
            continue
        case = _validate(settings.fill(data), lines, path, CASE_ADAPTER)
        cases.append(Located(case=case, path=str(path), line=line))
    if not cases and path.name != SETTINGS_FILE:
        raise SuiteError("the file holds no case", path=path, fix="add a scenario or a fixture")
    return cases


def folder_settings(path: Path, root: Path) -> SuiteSettings:
    """The `suite.yaml` settings that govern `path`, from `root` down to its folder."""
    settings = SuiteSettings()
    if not root.is_dir():
        return settings
    parts = path.parent.relative_to(root).parts
    folders = [root] + [root.joinpath(*parts[: i + 1]) for i in range(len(parts))]
    for folder in folders:
        own = folder / SETTINGS_FILE
        if own.is_file() and own != path:
            for data, lines, _ in _documents(own):
                if isinstance(data, dict) and data.get("kind") == "suite":
                    settings = settings.under(_validate(data, lines, own, SETTINGS_ADAPTER))
    return settings


def _files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    if root.is_dir():
        found = sorted(p for p in root.rglob("*") if p.suffix in SUFFIXES and p.is_file())
        inside = root.resolve()
        for path in found:
            if not path.resolve().is_relative_to(inside):
                raise SuiteError(
                    f"is a link to {path.resolve()}, outside the suite folder {root}",
                    path=path,
                    fix="copy the file into the folder, or pass it as a path of its own",
                )
        return found
    raise SuiteError(
        "no such file or folder", path=root, fix="give a suite name or an existing path"
    )


def load_paths(roots: Iterable[Path]) -> list[Located]:
    """Load files and folders; case ids must be unique across all of them."""
    found: list[Located] = []
    seen: dict[str, Located] = {}
    for root in roots:
        files = _files(root)
        if not files:
            raise SuiteError(
                "the folder holds no .yaml file", path=root, fix="point at a folder of cases"
            )
        for path in files:
            for item in load_file(path, folder_settings(path, root)):
                earlier = seen.get(item.case.id)
                if earlier is not None:
                    raise SuiteError(
                        f"duplicate case id `{item.case.id}` (first at "
                        f"{earlier.path}:{earlier.line})",
                        path=Path(item.path),
                        line=item.line,
                        field="name",
                        fix="give each case its own `name`",
                    )
                seen[item.case.id] = item
                found.append(item)
    return found
