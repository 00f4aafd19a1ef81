"""What the dispatching process knows of its broker: whether it answers, whether it is still
the server the run was sent to, and whether that server keeps its queue across a restart.

The broker is infrastructure, so an outage must not crash a waiting run. The dispatcher keeps
polling the store (workers store results without the broker) and retries the broker with
backoff, saying what it waits for; only after `MEMEVAL_BROKER_OUTAGE` seconds does it give up,
and then the run is closed as interrupted, with a partial report and the command that resumes
it. A Redis restarted without an append-only file comes back empty: the cases it still held
are gone, and the watchdog says so instead of blaming a worker.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from urllib.parse import urlsplit

import redis
from kombu.exceptions import OperationalError
from pydantic import BaseModel

from memeval.errors import BrokerGone
from memeval_farm.budget import redis_py_url
from memeval_farm.settings import REDIS_SCHEMES, safe_url

BROKER_FAULTS: tuple[type[BaseException], ...] = (
    OperationalError,
    redis.ConnectionError,
    redis.TimeoutError,
    OSError,
)
"""What a broker that is down or restarting raises, through kombu, Celery or redis-py."""
FIRST_RETRY_S = 1.0
MAX_RETRY_S = 5.0
SOCKET_TIMEOUT_S = 5.0
LOST_WITH_BROKER = (
    "lost with the broker: it restarted without an append-only file, so the cases it still "
    "held went with it"
)


class BrokerIdentity(BaseModel):
    """One life of one Redis server: `run_id` is new at every start."""

    run_id: str
    append_only: bool


def identify(url: str) -> BrokerIdentity | None:
    """The server behind `url`, or None for brokers that are not a plain Redis (AMQP,
    Sentinel), whose restarts this process cannot see. Raises a `BROKER_FAULTS` member when
    the server cannot be reached."""
    if urlsplit(url).scheme.lower() not in REDIS_SCHEMES or url.startswith("sentinel"):
        return None
    client = redis.Redis.from_url(
        redis_py_url(url),
        socket_timeout=SOCKET_TIMEOUT_S,
        socket_connect_timeout=SOCKET_TIMEOUT_S,
    )
    try:
        server = client.info("server")
        persistence = client.info("persistence")
    except redis.ResponseError:  # a managed Redis may refuse INFO: nothing to tell then
        return None
    finally:
        client.close()
    return BrokerIdentity(
        run_id=str(server.get("run_id", "")), append_only=bool(persistence.get("aof_enabled"))
    )


def persistence_warning(identity: BrokerIdentity | None, url: str) -> str | None:
    """What to tell the user before dispatching to a broker that forgets its queue."""
    if identity is None or identity.append_only:
        return None
    return (
        f"the broker at {safe_url(url)} keeps its queue in memory only (appendonly no): if it "
        "restarts mid-run, the cases it holds are lost; start it with `--appendonly yes` "
        "(docker-compose.yml does)"
    )


class Outage:
    """The broker's reachability as the waiting process sees it: after a failed check the next
    one waits 1, 2, 4, then 5 s, and past `patience` seconds of failures `BrokerGone`."""

    def __init__(
        self,
        url: str,
        *,
        patience: float,
        say: Callable[[str], None],
        revive: Callable[[], bool] | None = None,
    ) -> None:
        """`revive` restarts a broker this process owns (the embedded one) when it has died;
        it returns whether it did."""
        self.url = url
        self.patience = patience
        self.say = say
        self.revive = revive
        self.since: float | None = None
        self.last_up = time.monotonic()  # the last check it answered: an outage began after it
        self._announced = False
        self._next = 0.0
        self._pause = FIRST_RETRY_S

    def due(self, now: float) -> bool:
        return now >= self._next

    def failed(self, exc: BaseException) -> None:
        """A check failed. The first failure is retried without a word: after a restart the
        first command often meets a pooled connection the old server closed."""
        now = time.monotonic()
        if self.since is None:
            self.since, self._announced = now, False
        elif not self._announced:
            self._announced = True
            self.say(
                f"[yellow]the broker at {safe_url(self.url)} does not answer[/] "
                f"({_reason(exc)}): waiting for it, for up to {self.patience:g}s "
                "(MEMEVAL_BROKER_OUTAGE); results still land in the store meanwhile"
            )
        if self.revive is not None and self.revive():
            self.say("[yellow]the embedded broker had died[/]: restarted it from its file")
        waited = now - self.since
        if waited >= self.patience:
            raise BrokerGone(
                f"gave up on the broker at {safe_url(self.url)}: unreachable for {waited:.0f}s "
                f"({_reason(exc)})",
                fix="bring it back (or raise MEMEVAL_BROKER_OUTAGE), then resume the run",
            )
        self._next = now + min(self._pause, self.since + self.patience - now)
        self._pause = min(self._pause * 2, MAX_RETRY_S)

    def recovered(self) -> None:
        """Checks run only while no case lands, so the first failed one may come long after
        the broker went: the outage is told as the span between the two checks that bound it."""
        now = time.monotonic()
        if self.since is not None and self._announced:
            self.say(
                f"the broker answers again: it failed checks for {now - self.since:.0f}s, and "
                f"last answered {now - self.last_up:.0f}s ago"
            )
        self.since, self._next, self._pause = None, 0.0, FIRST_RETRY_S
        self.last_up = now


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def quietly(action: Callable[[], object]) -> None:
    """Best effort on a broker that may be down: revoking on Ctrl-C, for one."""
    with contextlib.suppress(*BROKER_FAULTS):
        action()
