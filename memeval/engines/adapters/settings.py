"""What a remote engine needs to be reached, read from the worker's environment.

An engine reference (`cortex?url=http://10.0.0.5:3141&enrich_wait=60`) travels inside task
messages, which Flower and Redis show to anyone who can see them. So a reference may carry
plain settings only; a field that is a secret can come from the environment alone, and a
reference that tries to set one is refused before anything is sent.
"""

from __future__ import annotations

from typing import Any, ClassVar

import httpx
from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails
from pydantic_settings import BaseSettings, SettingsConfigDict

from memeval.errors import UsageError


class Settings(BaseSettings):
    """Base for every engine's settings: environment first, reference options on top. An
    in-process engine (`dense`) subclasses it directly; a remote one through `EngineSettings`."""

    model_config = SettingsConfigDict(extra="forbid", frozen=True)
    engine: ClassVar[str] = "engine"

    @classmethod
    def env_name(cls, field: str) -> str:
        info = cls.model_fields[field]
        alias = info.validation_alias
        if isinstance(alias, AliasChoices):
            return str(alias.choices[-1]).upper()
        return f"{cls.model_config.get('env_prefix', '')}{field}".upper()

    @classmethod
    def is_secret(cls, field: str) -> bool:
        return cls.model_fields[field].annotation in (SecretStr, SecretStr | None)

    @classmethod
    def load(cls, options: dict[str, str]) -> Settings:
        """Settings from the environment, with `options` from the reference on top; every
        problem becomes one message that names the option or variable to change."""
        cls._check_options(options)
        try:
            return cls.model_validate(options)
        except ValidationError as exc:
            raise cls._explain(exc.errors()[0]) from None

    @classmethod
    def check(cls, options: dict[str, str]) -> None:
        """`load`'s checks, minus the secrets: for a process that only dispatches work, whose
        workers hold the keys."""
        cls._check_options(options)
        try:
            cls.model_validate(options)
        except ValidationError as exc:
            for error in exc.errors():
                field = _field_of(cls, error["loc"])
                if not (error["type"] == "missing" and cls.is_secret(field)):
                    raise cls._explain(error) from None

    @classmethod
    def _check_options(cls, options: dict[str, str]) -> None:
        for name in options:
            if name not in cls.model_fields:
                raise UsageError(
                    f"engine `{cls.engine}` has no option `{name}`",
                    fix=f"use one of: {', '.join(cls.plain_fields())}",
                )
            if cls.is_secret(name):
                raise UsageError(
                    f"`{name}` is a secret and cannot be part of an engine reference",
                    fix=f"set {cls.env_name(name)} in the environment of every worker",
                )

    @classmethod
    def plain_fields(cls) -> list[str]:
        return [name for name in cls.model_fields if not cls.is_secret(name)]

    @classmethod
    def _explain(cls, error: ErrorDetails) -> UsageError:
        field = _field_of(cls, error["loc"])
        env = cls.env_name(field) if field in cls.model_fields else field
        if error["type"] == "missing":
            how = f"set {env}"
            if not cls.is_secret(field):
                how += f", or add `?{field}=...` to the engine reference"
                if field == "url":
                    how += " (or pass --url)"
            return UsageError(f"engine `{cls.engine}` needs `{field}`", fix=how)
        message = str(error["msg"]).removeprefix("Value error, ")
        return UsageError(
            f"engine `{cls.engine}`: `{field}`: {message}",
            fix=f"correct {env} or the `{field}` option",
        )


class EngineSettings(Settings):
    """Base for every remote engine's settings: where the service is, and how to wait on it."""

    url: str = Field(description="Base URL of the service.")
    timeout: float = Field(default=30.0, gt=0, description="Seconds before a request times out.")
    retries: int = Field(default=4, ge=0, description="Retries on 429, 5xx and lost connections.")
    backoff: float = Field(default=0.5, ge=0, description="First retry delay in seconds; doubles.")
    retry_after_max: float = Field(
        default=300.0,
        ge=0,
        description="Longest Retry-After one call waits out; past it every worker pauses and "
        "the case is rerun later.",
    )

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        return http_url(value)


def http_url(value: str) -> str:
    """`value` without a trailing slash, if it is an http(s) URL with a host."""
    try:
        url = httpx.URL(value)
    except (httpx.InvalidURL, TypeError) as exc:
        raise ValueError(f"`{value}` is not a URL") from exc
    if url.scheme not in ("http", "https") or not url.host:
        raise ValueError(f"`{value}` is not an http(s) URL with a host")
    return value.rstrip("/")


def _field_of(cls: type[Settings], loc: tuple[Any, ...]) -> str:
    """Errors name a field or one of its aliases; map an alias back to its field."""
    name = str(loc[0]) if loc else "?"
    for field, info in cls.model_fields.items():
        if name == field or name.upper() in _aliases(info):
            return field
    return name


def _aliases(info: FieldInfo) -> set[str]:
    alias = info.validation_alias
    if isinstance(alias, AliasChoices):
        return {str(choice).upper() for choice in alias.choices}
    return set()
