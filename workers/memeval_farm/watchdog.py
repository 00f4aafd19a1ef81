"""Decides when a case that has not landed is lost, so a run never waits forever.

With late acks a dead worker's case stays unacknowledged in Redis until the visibility timeout
hands it to another worker, which is deliberately longer than any case may run. The run does
not wait that long: once results stop landing, the watchdog asks the broker and the workers
where the missing cases are. A case that is neither queued nor held by a live worker (running,
reserved, or waiting out a retry delay) twice in a row is lost; the run is closed with it
marked lost, and `memeval run --resume` sends it again. A late result still replaces the mark.

The broker is asked only through `Outage`: a check that cannot reach it declares nothing lost
and is retried with backoff, and a check that finds a new server behind the URL (a restart)
that forgot its queue names that as the reason the missing cases are lost. Cases a worker had
reserved when its connection dropped stay "delivered" in Redis, held by nobody: before calling
them lost, the watchdog queues those messages again (`_rescue`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from celery import Celery
from kombu.exceptions import ChannelError

from memeval.evaluation.jobs import JobKey
from memeval.store.repo import LOST_REASON
from memeval_farm.broker import (
    BROKER_FAULTS,
    LOST_WITH_BROKER,
    BrokerIdentity,
    Outage,
    identify,
)

STRIKES = 2
INSPECT_TIMEOUT = 1.0


class Watchdog:
    def __init__(
        self,
        app: Celery,
        *,
        queue: str,
        quiet_after: float,
        task_ids: dict[str, JobKey],
        outage: Outage,
        identity: BrokerIdentity | None = None,
        nodes: list[str] | None = None,
        alive: Callable[[], bool] | None = None,
    ) -> None:
        """`identity` is the broker the cases were sent to; `nodes` and `alive` describe
        local workers when this process owns them."""
        self.app = app
        self.queue = queue
        self.quiet_after = quiet_after
        self.task_ids = task_ids
        self.outage = outage
        self.identity = identity
        self.nodes = nodes
        self.alive = alive
        self.reason = LOST_REASON
        self._last_progress = time.monotonic()
        self._last_check = 0.0
        self._strikes = 0
        self._rescued: set[str] = set()

    def lost(self, waiting: set[JobKey], progressed: bool) -> set[JobKey]:
        """The waiting cases to give up on now; empty while any of them may still land."""
        now = time.monotonic()
        if self.outage.since is not None and self.outage.due(now):
            self._retry_broker()  # results may land meanwhile: they say nothing of the broker
        if progressed or not waiting:
            self._last_progress, self._strikes = now, 0
            return set()
        if self.alive is not None and not self.alive():
            return set(waiting)
        if now - max(self._last_progress, self._last_check) < self.quiet_after:
            return set()
        if not self.outage.due(now):
            return set()
        self._last_check = now
        try:
            self._same_broker()
            queued = self.queued()
            held = {self.task_ids[i] for i in self._held() if i in self.task_ids}
            orphaned = queued == 0 and not held & waiting
            rescued = self._rescue(waiting) if orphaned and self._strikes + 1 >= STRIKES else 0
        except BROKER_FAULTS as exc:
            self.outage.failed(exc)  # raises `BrokerGone` once patience runs out
            self._strikes = 0
            return set()
        self.outage.recovered()
        if rescued:
            self.outage.say(
                f"{rescued} cases were held by a connection the broker lost: queued again"
            )
            self._strikes = 0
            return set()
        self._strikes = self._strikes + 1 if orphaned else 0
        return set(waiting) if self._strikes >= STRIKES else set()

    def _rescue(self, waiting: set[JobKey]) -> int:
        """Queue again this run's messages that Redis still counts as delivered but no live
        worker holds: a worker that loses its broker connection forgets the cases it had
        reserved, and Redis would hand them out only after the visibility timeout. Each
        message is rescued once; one orphaned twice is lost after all."""
        wanted = {i for i, key in self.task_ids.items() if key in waiting} - self._rescued
        with self.app.connection_for_write() as connection:
            channel = connection.default_channel
            qos, key = getattr(channel, "qos", None), getattr(channel, "unacked_key", None)
            if not wanted or qos is None or key is None:  # not the Redis transport
                return 0
            with channel.conn_or_acquire() as client:
                entries = client.hgetall(key)
            found = 0
            for tag, raw in entries.items():
                task_id = json.loads(raw)[0].get("headers", {}).get("id")
                if task_id in wanted:
                    qos.restore_by_tag(tag)
                    self._rescued.add(task_id)
                    found += 1
            return found

    def _retry_broker(self) -> None:
        try:
            self._same_broker()
            self.queued()
        except BROKER_FAULTS as exc:
            self.outage.failed(exc)
        else:
            self.outage.recovered()

    @property
    def broker_lost_them(self) -> bool:
        return self.reason is LOST_WITH_BROKER

    def _same_broker(self) -> None:
        """Notice a restart: a Redis without an append-only file comes back empty."""
        if self.identity is None:
            return
        now = identify(self.outage.url)
        if now is None or now.run_id == self.identity.run_id:
            return
        if self.identity.append_only:
            self.outage.say(
                "the broker restarted from its append-only file; a case the file did not keep "
                "is found missing from the queue and reported lost"
            )
        else:
            self.reason = LOST_WITH_BROKER
            self.outage.say(
                "[red]the broker restarted without an append-only file[/]: "
                "the cases it still held are lost with it"
            )
        self.identity = now

    def queued(self) -> int:
        with self.app.connection_for_read() as connection:
            try:
                _, count, _ = connection.default_channel.queue_declare(
                    queue=self.queue, passive=True
                )
            except ChannelError:  # Redis drops an empty queue's key
                return 0
            return int(count)

    def _held(self) -> set[str]:
        """Ids of tasks any live worker is running, has reserved, or holds for a retry."""
        inspect = self.app.control.inspect(
            destination=self.nodes,
            timeout=INSPECT_TIMEOUT,
            limit=len(self.nodes) if self.nodes else None,
        )
        ids: set[str] = set()
        for method in (inspect.active, inspect.reserved):
            for requests in (method() or {}).values():
                ids.update(r["id"] for r in requests)
        for entries in (inspect.scheduled() or {}).values():
            ids.update(e["request"]["id"] for e in entries)
        return ids
