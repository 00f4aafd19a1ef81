"""How the farm reaches its broker and how long a case may take, from `MEMEVAL_*` variables.

Every process reads its own environment: a worker on another machine is configured by that
machine, never by a task message, which is why nothing here travels with a task.
"""

from __future__ import annotations

from typing import Self
from urllib.parse import urlsplit

from pydantic import Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from memeval.errors import UsageError

REDIS_SCHEMES = ("redis", "rediss", "redis+socket", "sentinel")
BROKER_SCHEMES = (*REDIS_SCHEMES, "amqp", "amqps", "pyamqp")


class FarmSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MEMEVAL_", extra="ignore")

    broker_url: str | None = Field(
        default=None, description="Unset: `memeval run` starts a private Redis and local workers."
    )
    result_backend: str | None = Field(
        default=None, description="Where chord state lives; defaults to the broker URL."
    )
    queue: str = Field(default="memeval", min_length=1)
    namespace: str = Field(
        default="",
        pattern=r"^[A-Za-z0-9_.-]*$",
        description="Prefix of every Redis key and channel, so farms can share one Redis.",
    )
    case_timeout: float = Field(
        default=600.0, gt=0, description="Seconds a case may run before it is recorded as error."
    )
    visibility_timeout: float | None = Field(
        default=None,
        gt=0,
        description="Seconds before Redis hands an unacknowledged case to another worker; "
        "must exceed the hard time limit, or a slow case would run twice at once.",
    )
    retries: int = Field(default=3, ge=0, description="Retries of an unreachable engine.")
    retry_backoff: float = Field(default=2.0, ge=0, description="First retry delay, doubling.")
    retry_backoff_max: float = Field(default=60.0, ge=0)
    quiet_after: float = Field(
        default=5.0,
        gt=0,
        description="Seconds without a new result before the watchdog looks for lost cases.",
    )
    poll_interval: float = Field(
        default=0.2,
        gt=0,
        description="Seconds between a waiting run's looks at the store; the last case is seen "
        "half of it late on average (one light query per look).",
    )
    broker_outage: float = Field(
        default=120.0,
        gt=0,
        description="Seconds a waiting `memeval run` rides out an unreachable broker before it "
        "stops the run as interrupted, with a partial report and the command that resumes it.",
    )
    dispatch_window: int = Field(
        default=128,
        ge=1,
        description="Cases a waiting `memeval run` keeps queued or running at once, read from "
        "the suite as earlier ones land: what bounds the memory of the dispatcher and the "
        "broker whatever the suite's size. A run raises it to twice the cases its workers "
        "run at once (the embedded farm's, or those of the fleet's workers that answer the "
        "check before dispatch); set it above that for a fleet that grows during the run.",
    )
    dispatch_window_mb: int = Field(
        default=128,
        ge=1,
        description="Megabytes of case bodies (as JSON) in flight at most, whatever "
        "MEMEVAL_DISPATCH_WINDOW allows: a LongMemEval-M instance is 6 MB, so 128 of them "
        "would hold the broker at 1 GB (Redis keeps a body base64-encoded, a third larger).",
    )
    preflight_timeout: float = Field(
        default=15.0,
        gt=0,
        description="Seconds the dispatcher waits for the fleet's workers to answer the check "
        "of the engine and the store made before any case is sent.",
    )

    @property
    def soft_time_limit(self) -> float:
        """Celery's soft limit backs up the case timeout the worker enforces itself."""
        return self.case_timeout + 15

    @property
    def hard_time_limit(self) -> float:
        return self.case_timeout + 30

    @property
    def visibility(self) -> float:
        return self.visibility_timeout or 2 * self.hard_time_limit

    @property
    def key_prefix(self) -> str:
        return f"{self.namespace}:" if self.namespace else ""

    @property
    def embedded(self) -> bool:
        return self.broker_url is None

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.visibility <= self.hard_time_limit:
            raise UsageError(
                f"MEMEVAL_VISIBILITY_TIMEOUT ({self.visibility:g}s) must exceed the hard task "
                f"time limit ({self.hard_time_limit:g}s)",
                fix="raise MEMEVAL_VISIBILITY_TIMEOUT or lower MEMEVAL_CASE_TIMEOUT",
            )
        if self.broker_url is not None:
            _check_url("MEMEVAL_BROKER_URL", self.broker_url, BROKER_SCHEMES)
            if self.result_backend is None and _scheme(self.broker_url) not in REDIS_SCHEMES:
                raise UsageError(
                    "chords need a result backend, and this broker cannot be one",
                    fix="set MEMEVAL_RESULT_BACKEND to a redis:// URL",
                )
        if self.result_backend is not None:
            _check_url("MEMEVAL_RESULT_BACKEND", self.result_backend, REDIS_SCHEMES)
        return self

    def backend_for(self, broker_url: str) -> str:
        return self.result_backend or broker_url


def _scheme(url: str) -> str:
    return urlsplit(url).scheme.lower()


def _check_url(name: str, url: str, schemes: tuple[str, ...]) -> None:
    if _scheme(url) not in schemes:
        raise UsageError(
            f"{name} `{safe_url(url)}` is not a URL memeval can use",
            fix=f"use one of these schemes: {', '.join(s + '://' for s in schemes)}",
        )


def safe_url(url: str) -> str:
    """The URL with its passwords masked, for messages and logs (as kombu masks them, without
    importing kombu: an in-process run reads these settings and loads no part of Celery). A
    sentinel URL lists several servers, `;`-separated, each with its own password."""
    return ";".join(_masked(part) for part in url.split(";"))


def _masked(url: str) -> str:
    parts = urlsplit(url)
    try:
        password = parts.password
    except ValueError:
        return url
    if not password:
        return url
    user, _, host = parts.netloc.rpartition("@")
    return parts._replace(netloc=f"{user.rpartition(':')[0]}:**@{host}").geturl()


def load_settings() -> FarmSettings:
    """Settings with pydantic's own complaints turned into one clear line."""
    try:
        return FarmSettings()
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise UsageError(
            f"MEMEVAL_{field.upper()}: {first['msg']}", fix="correct that environment variable"
        ) from exc
