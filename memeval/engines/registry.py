"""Engines by reference: the one place a name on the command line becomes an `Engine`.

A reference is what task messages carry, so it holds no secret:

- `reference`, `cortex`, ...: a built-in engine, or a name a package registered under the
  `memeval.engines` entry-point group;
- `package.module:Class`: any Engine subclass importable in the worker;
- either, followed by `?option=value&...`: plain settings for an engine that takes them,
  e.g. `http?url=http://127.0.0.1:8080`, `cortex?enrich_wait=60` or `dense?embedder=minilm`.
  Keys come only from each worker's environment (see `memeval engines` for the variables).
"""

from __future__ import annotations

import importlib.util
import os
from urllib.parse import parse_qsl, urlencode

from pydantic import BaseModel, Field

from memeval.engines import plugins
from memeval.engines.adapters.settings import Settings
from memeval.engines.base import Engine
from memeval.errors import UsageError

BUILTIN: dict[str, str] = {
    "reference": "memeval.engines.reference:ReferenceEngine",
    "naive": "memeval.engines.naive:NaiveEngine",
    "bm25": "memeval.engines.bm25:BM25Engine",
    "dense": "memeval.engines.dense:DenseEngine",
    "hybrid": "memeval.engines.hybrid:HybridEngine",
    "full-context": "memeval.engines.full_context:FullContextEngine",
    "oracle": "memeval.engines.oracle:OracleEngine",
    "http": "memeval.engines.adapters.http:HttpEngine",
    "cortex": "memeval.engines.adapters.cortex:CortexEngine",
    "tinyhumans": "memeval.engines.adapters.tinyhumans:TinyHumansEngine",
    "verifiedstate": "memeval.engines.adapters.verifiedstate:VerifiedStateEngine",
    "mem0": "memeval.engines.adapters.mem0:Mem0Engine",
    "mem0-oss": "memeval.engines.adapters.mem0_oss:Mem0OssEngine",
    "graphiti": "memeval.engines.adapters.graphiti:GraphitiEngine",
    "zep": "memeval.engines.adapters.zep:ZepEngine",
    "supermemory": "memeval.engines.adapters.supermemory:SupermemoryEngine",
    "langmem": "memeval.engines.adapters.langmem_engine:LangMemEngine",
    "cognee": "memeval.engines.adapters.cognee_engine:CogneeEngine",
    "letta": "memeval.engines.adapters.letta_engine:LettaEngine",
}

# In-process engines over an optional library: the module each imports, and the extra that
# installs it, so `memeval engines` can name the exact `pip install` a user is missing.
LIBRARIES: dict[str, tuple[str, str]] = {
    "mem0-oss": ("mem0", "mem0"),
    "graphiti": ("graphiti_core", "graphiti"),
    "langmem": ("langmem", "langmem"),
    "cognee": ("cognee", "cognee"),
    "letta": ("letta_client", "letta"),
}


class EngineRef(BaseModel):
    name: str
    options: dict[str, str] = Field(default_factory=dict)


def parse_ref(text: str) -> EngineRef:
    name, _, query = text.strip().partition("?")
    fix = "write NAME or NAME?option=value&option=value (values URL-encoded)"
    if not name:
        raise UsageError(f"engine reference `{text}` names no engine", fix=fix)
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        raise UsageError(f"cannot read the options of engine `{text}`", fix=fix) from None
    options: dict[str, str] = {}
    for key, value in pairs:
        if key in options:
            raise UsageError(f"engine `{name}`: option `{key}` is given twice", fix=fix)
        if key == "url" and any(ch.isspace() for ch in value):
            # httpx accepts a space inside a host, so the run would start and every case fail.
            raise UsageError(
                f"engine `{name}`: `url` `{value}` is not an http(s) URL: it contains a space",
                fix="give the service's base URL without spaces, e.g. http://host:8080",
            )
        options[key] = value
    return EngineRef(name=name, options=options)


def with_options(text: str, **options: str | float | None) -> str:
    """`text` with more options folded in, for flags such as `--url` that set one."""
    ref = parse_ref(text)
    for key, value in options.items():
        if value is None:
            continue
        if key in ref.options:
            raise UsageError(
                f"`{key}` is set twice: by a flag and in the engine reference `{text}`",
                fix="keep one of them",
            )
        ref.options[key] = str(value)
    return ref.name + (f"?{urlencode(ref.options)}" if ref.options else "")


def known() -> list[str]:
    return sorted({*BUILTIN, *plugins.entry_points_by_name()})


def engine_class(name: str) -> type[Engine]:
    """The class behind a name: built-in first, then entry points, then `module:Class`."""
    if name in BUILTIN:
        return plugins.load_class(BUILTIN[name])
    if plugins.is_target(name):
        return plugins.load_class(name)
    ep = plugins.entry_points_by_name().get(name)
    if ep is None:
        raise UsageError(
            f"unknown engine `{name}`",
            fix=f"use one of: {', '.join(known())}, or package.module:Class",
        )
    return plugins.load_entry_point(ep)


def settings_model(cls: type[Engine]) -> type[Settings] | None:
    model = getattr(cls, "settings_model", None)
    return model if isinstance(model, type) and issubclass(model, Settings) else None


def validate(name: str) -> None:
    """Everything `create` checks except the keys: what a process that only dispatches to
    remote workers can check, since the workers hold the keys."""
    ref = parse_ref(name)
    model = settings_model(engine_class(ref.name))
    if model is None:
        _no_options(ref)
    else:
        model.check(ref.options)


def _no_options(ref: EngineRef) -> None:
    if ref.options:
        raise UsageError(f"engine `{ref.name}` takes no options", fix=f"use plain `{ref.name}`")


def create(name: str) -> Engine:
    """A fresh engine from a reference; each call gets its own state, so runs never share
    memory. Settings are checked here, before any network call, so a missing key or a bad
    URL stops `memeval run` before the run exists."""
    ref = parse_ref(name)
    cls = engine_class(ref.name)
    model = settings_model(cls)
    if model is None:
        if ref.options:
            raise UsageError(f"engine `{ref.name}` takes no options", fix=f"use plain `{ref.name}`")
        return cls()
    _no_blank_secrets(ref.name, model)
    return cls(model.load(ref.options))  # type: ignore[call-arg]


def models_of(text: str) -> list[str]:
    """The models an engine reference computes with, as its class declares them
    (`models_used(settings)`), for the line every report prints; [] when it declares none or
    its settings cannot be read in this process."""
    try:
        ref = parse_ref(text)
        cls = engine_class(ref.name)
        model = settings_model(cls)
        settings = model.load(ref.options) if model is not None else None
    except UsageError:
        return []
    declared = getattr(cls, "models_used", None)
    return list(declared(settings)) if callable(declared) else []


def _no_blank_secrets(name: str, model: type[Settings]) -> None:
    """`CORTEX_API_KEY=` (an unset shell variable, a blank .env line) is a missing key: taken as
    a key, the run would start and every case fail on authentication."""
    for field in model.model_fields:
        env = model.env_name(field)
        if model.is_secret(field) and env in os.environ and not os.environ[env].strip():
            raise UsageError(
                f"engine `{name}` needs `{field}`, but {env} is set to nothing",
                fix=f"set {env} to the key",
            )


class Setting(BaseModel):
    """One setting an engine reads: where it comes from, never its value if secret."""

    option: str | None = Field(description="Its `?option=` name; None for a secret.")
    env: str
    required: bool
    secret: bool
    default: str | None = None
    present: bool = Field(description="Whether this process's environment sets it.")
    description: str = ""


class EngineListing(BaseModel):
    name: str
    origin: str
    capabilities: list[str] | None = Field(description="None: declared by the server.")
    settings: list[Setting] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    verified_against: str = ""
    error: str | None = None


def describe() -> list[EngineListing]:
    """Every installed engine, for `memeval engines`; a broken plug-in is listed, not fatal."""
    eps = plugins.entry_points_by_name()
    rows = []
    for name in known():
        origin = "built-in" if name in BUILTIN else f"plugin {eps[name].value}"
        try:
            cls = engine_class(name)
        except UsageError as exc:
            rows.append(EngineListing(name=name, origin=origin, capabilities=[], error=exc.message))
            continue
        from_server = getattr(cls, "capabilities_from_server", False)
        rows.append(
            EngineListing(
                name=name,
                origin=origin,
                capabilities=None if from_server else sorted(cls.capabilities),
                settings=_settings_of(settings_model(cls)),
                notes=list(getattr(cls, "notes", ())),
                verified_against=cls.verified_against,
                error=_library_missing(name),
            )
        )
    return rows


def _library_missing(name: str) -> str | None:
    if name not in LIBRARIES:
        return None
    module, extra = LIBRARIES[name]
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or the module blocked
        found = False
    return None if found else f"needs the `{module}` package: pip install 'memeval[{extra}]'"


def _settings_of(model: type[Settings] | None) -> list[Setting]:
    if model is None:
        return []
    out = []
    for field, info in model.model_fields.items():
        env = model.env_name(field)
        secret = model.is_secret(field)
        out.append(
            Setting(
                option=None if secret else field,
                env=env,
                required=info.is_required(),
                secret=secret,
                default=None if info.is_required() else str(info.default),
                present=bool(os.environ.get(env)),
                description=info.description or "",
            )
        )
    return out
