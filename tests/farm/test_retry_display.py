"""A retried case keeps the display strings it was sent with: Celery republishes a retry
without them unless asked, and Flower would then show the raw arguments (the case body, no
label, nothing masked)."""

from __future__ import annotations

import json

import pytest
import redis
from celery.exceptions import Retry

from memeval.evaluation.jobs import CaseJob
from memeval.runner import RunOptions
from memeval.suites.catalog import resolve
from memeval_farm.config import make_app
from memeval_farm.names import RUN_CASE
from memeval_farm.settings import FarmSettings
from memeval_farm.tasks import retry


def test_a_retry_is_published_with_the_run_label_and_case_not_the_raw_arguments(
    redis_url: str, namespace: str
) -> None:
    settings = FarmSettings(broker_url=redis_url, namespace=namespace)
    app = make_app(settings)
    case = resolve("dimensions").cases[0].case
    job = CaseJob(
        run_id="r9", engine="reference", case=case, trial=0, options=RunOptions(), label="L9"
    )
    message = job.message()
    task = app.tasks[RUN_CASE]
    task.push_request(
        id="t-1",
        args=message["args"],
        kwargs=message["kwargs"],
        argsrepr=message["argsrepr"],
        kwargsrepr=message["kwargsrepr"],
        retries=0,
        called_directly=False,
        is_eager=False,
        delivery_info={"routing_key": settings.queue, "exchange": ""},
    )
    try:
        with pytest.raises(Retry):
            raise retry(task, settings)
    finally:
        task.pop_request()
    queued = redis.Redis.from_url(redis_url).lrange(settings.key_prefix + settings.queue, 0, -1)
    (sent,) = [json.loads(m)["headers"] for m in queued]
    assert sent["retries"] == 1
    assert sent["argsrepr"] == f"run=r9 label='L9' case={case.id!r} trial=0"
    assert sent["kwargsrepr"] == message["kwargsrepr"]
    assert "assertions" not in sent["kwargsrepr"]
