"""The farm as an executor of a planned run (`memeval.evaluation.execution.Executor`): an
embedded farm on this machine (no `shared` app), or the fleet behind `shared`'s broker.

The core decides what a stop means and closes the run; this module only runs the cases on the
farm and turns the farm's own way of stopping (a broker that stays away) into a `RunStopped`.
"""

from __future__ import annotations

from collections.abc import Iterable

from celery import Celery
from rich.console import Console

from memeval.errors import BrokerGone
from memeval.evaluation.execution import Execution
from memeval.evaluation.outcome import RunStopped, Stop
from memeval.evaluation.planning import PlannedRun
from memeval.store import Store
from memeval.summary import plural
from memeval_farm.dispatch import MB, chord_size, dispatch
from memeval_farm.farm import connect, preflight_fleet, run_on_farm
from memeval_farm.redis_state import redis_opener
from memeval_farm.settings import FarmSettings


class FarmExecutor:
    def __init__(self, settings: FarmSettings, shared: Celery | None) -> None:
        self.settings = settings
        self.shared = shared
        self.remote = shared is not None

    @classmethod
    def connected(cls, settings: FarmSettings) -> FarmExecutor:
        """The fleet's broker is checked reachable here, before the run exists."""
        return cls(settings, connect(settings))

    def run(self, store: Store, planned: PlannedRun, how: Execution) -> None:
        try:
            run_on_farm(
                self.settings,
                self.shared,
                store,
                planned.run_id,
                planned.outgoing(),
                workers=how.workers,
                pool=how.pool,
                console=how.console,
                verbose=how.verbose,
                before_dispatch=redis_opener(planned.models, how.console),
            )
        except BrokerGone as exc:
            raise RunStopped(Stop.broker, exc) from exc

    def dispatch_detached(self, store: Store, planned: PlannedRun, console: Console) -> None:
        """Send the cases to the fleet and return; its workers finish the run. They are read
        and sent a chord at a time, so this process holds one chord's cases; the broker holds
        them all until workers take them."""
        if self.shared is None:
            raise ValueError("a detached run needs a fleet's broker")
        opener = redis_opener(planned.models, console)
        if opener is not None:
            opener(str(self.shared.conf.result_backend))
        if planned.todo:
            engines = {planned.run_id: planned.engine}
            preflight_fleet(self.shared, self.settings, store, engines, console)
            sent = dispatch(
                self.shared,
                planned.run_id,
                planned.jobs(),
                prefix=self.settings.key_prefix,
                batch=chord_size(self.settings.dispatch_window),
            )
            console.print(held_by_broker(sent.sizes.values(), self.settings), highlight=False)


def held_by_broker(sizes: Iterable[int], settings: FarmSettings) -> str:
    """What a detached dispatch leaves in the broker: every case it sent, until a worker takes
    it. A waiting run keeps `MEMEVAL_DISPATCH_WINDOW_MB` there at most; a detached one on a
    LongMemEval-M file would leave about 3 GB (4 GB base64-encoded in Redis)."""
    sent = list(sizes)
    held = sum(sent)
    shown = f"{held / MB:.1f} MB" if held >= MB else f"{held / 1024:.1f} KB"
    line = f"sent {plural(len(sent), 'case')}: {shown} of case bodies wait in the broker"
    if held <= settings.dispatch_window_mb * MB:
        return f"[dim]{line}[/]"
    return (
        f"[yellow]{line}[/], more than the {settings.dispatch_window_mb} MB a waiting run keeps "
        "there (MEMEVAL_DISPATCH_WINDOW_MB): give the broker the memory, or run without "
        "--detach"
    )
