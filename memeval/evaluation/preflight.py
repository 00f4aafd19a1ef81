"""The check made once before a run exists: the engine is known, answers, accepts its key and
speaks a protocol memeval understands. Without it one bad setting fails every case slowly (a
wrong token: every case retried, then an error, minutes per case).

This is the check for whoever shares this process's environment (an in-process run, an embedded
farm's workers, or a fleet worker answering the farm's preflight command): the keys are here.
A shell dispatching to a fleet holds no keys, so it only validates the reference, and the fleet's
workers run this same check on their side (`memeval_farm.preflight`).
"""

from __future__ import annotations

import asyncio

from memeval.engines import registry
from memeval.engines.base import Engine
from memeval.errors import CreditsExhausted, EngineUnavailable, MemevalError, UsageError

ENGINE_TIMEOUT_S = 10.0


async def _preflight(name: str) -> MemevalError | None:
    engine = registry.create(name)
    try:
        return await instance_problem(engine, name)
    finally:
        await engine.close()


def engine_problem(name: str) -> MemevalError | None:
    """What stops engine `name` from running any case, as the error to print, or None."""
    try:
        return asyncio.run(_preflight(name))
    except Exception as exc:  # building or closing it failed
        return _problem(exc, name)


async def instance_problem(engine: Engine, name: str) -> MemevalError | None:
    """The same check of an engine already built, on the caller's event loop (the pytest
    plugin's, whose engine lives on it)."""
    try:
        await asyncio.wait_for(engine.preflight(), ENGINE_TIMEOUT_S)
    except Exception as exc:
        return _problem(exc, name)
    return None


def _problem(exc: Exception, name: str) -> MemevalError:
    if isinstance(exc, CreditsExhausted):  # before its base: the vendor's words need the engine's
        return CreditsExhausted(
            f"engine `{name}` has no credit left: {exc}",
            fix="top up the engine's account (or use another key), then run again",
        )
    if isinstance(exc, MemevalError):
        return exc
    if isinstance(exc, EngineUnavailable):
        return UsageError(
            f"engine `{name}` cannot be reached: {exc}",
            fix="start it, or correct its URL setting (`memeval engines` lists them)",
        )
    if isinstance(exc, TimeoutError):
        return UsageError(
            f"engine `{name}` did not answer its preflight check within {ENGINE_TIMEOUT_S:g}s",
            fix="check that its URL points at a running service",
        )
    return UsageError(  # a plug-in's own check may fail any way it likes
        f"engine `{name}` failed its preflight check: {type(exc).__name__}: {exc}",
        fix="fix the engine's settings; `memeval engines` shows what it reads",
    )


def check_here(name: str) -> None:
    """The check for workers that share this process's environment."""
    found = engine_problem(name)
    if found is not None:
        raise found


def check_engine(name: str, *, remote: bool) -> None:
    """Fail fast on an unknown engine or bad options, before the run exists. Workers on a
    shared broker hold the keys, so a dispatching shell there is not asked for them (the
    fleet's own check, `memeval_farm.farm.preflight_fleet`, needs the run and comes later);
    local workers share this process's environment, so here the engine's `preflight()` runs."""
    if remote:
        registry.validate(name)
    else:
        check_here(name)
