"""How the Celery app is configured: for at-least-once work that is safe to repeat.

- `acks_late` + `reject_on_worker_lost`: a message is acknowledged only after its case is
  stored, and one whose worker process died goes back to the queue, not to the bin.
- prefetch 1: a worker holds no case it is not running, so a dead worker strands nothing
  else and a slow case never queues others behind it.
- the Redis visibility timeout exceeds the hard time limit: Redis never hands a case that is
  still running to a second worker.
- task events, including `task-sent`, so Flower sees every case from the moment it is queued.

`memeval_farm.app` holds the instance built from the environment, for
`celery -A memeval_farm.app`; the embedded farm builds its own, since its broker URL exists
only once its Redis has started.
"""

from __future__ import annotations

from datetime import timedelta

from celery import Celery

from memeval.secrets import install_masking
from memeval_farm import metrics, outage_log
from memeval_farm.embedded import mark_exits
from memeval_farm.names import RUN_CASE
from memeval_farm.settings import FarmSettings
from memeval_farm.tasks import configure


def make_app(settings: FarmSettings, broker_url: str | None = None) -> Celery:
    """`broker_url` overrides the settings' for the embedded broker, known only at run time."""
    install_masking()  # every worker and dispatcher builds its app here: mask its logs
    outage_log.install()  # and keep an outage in a worker's log to one line per condition
    url = broker_url or settings.broker_url
    app = Celery("memeval", broker=url, backend=settings.backend_for(url) if url else None)
    transport: dict[str, object] = {"visibility_timeout": settings.visibility}
    if settings.key_prefix:
        transport["global_keyprefix"] = settings.key_prefix
    app.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_soft_time_limit=settings.soft_time_limit,
        task_time_limit=settings.hard_time_limit,
        broker_transport_options=transport,
        result_backend_transport_options=transport,
        broker_connection_retry_on_startup=True,
        task_default_queue=settings.queue,
        task_track_started=True,
        worker_send_task_events=True,
        task_send_sent_event=True,
        result_expires=timedelta(days=7),
        result_chord_join_timeout=30,
        # The tasks are defined once, in `memeval_farm.tasks`; what they take from this farm's
        # settings is set here. The time limits above apply to every task.
        task_annotations={RUN_CASE: {"max_retries": settings.retries}},
    )
    configure(app, settings)
    metrics.install(app)
    mark_exits()
    return app
