"""Every report of a run names the models behind its engine's figures: the embedder, and the
chat model with its stand-in caveat; an engine that uses none gets no such line."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memeval.embeddings.weights import INT8_MODEL, MODEL
from memeval.models import CHAT_MODEL
from memeval.report.html import render_html
from memeval.report.markdown import render
from memeval.results import RunReport


def report(engine: str) -> RunReport:
    at = datetime(2026, 12, 5, 1, 0, tzinfo=UTC)
    return RunReport(run_id="r1", label="l", engine=engine, suite="s", started_at=at)


@pytest.mark.parametrize("engine", ["dense", "hybrid"])
def test_the_in_process_baselines_name_the_minilm_tier_they_ran(engine):
    assert f"Engine models: embeddings {INT8_MODEL}, in-process." in render(report(engine))
    assert INT8_MODEL in render_html(report(engine))
    exact = report(f"{engine}?embedder=minilm")
    assert f"Engine models: embeddings {MODEL}, in-process." in render(exact)
    assert INT8_MODEL not in render_html(exact)


def test_an_engine_on_a_model_service_names_both_models_and_the_url():
    text = render(report("mem0-oss?url=http://127.0.0.1:9999/v1&embedder_model=e5-small"))
    assert "embeddings e5-small at http://127.0.0.1:9999/v1" in text
    assert f"chat {CHAT_MODEL} at http://127.0.0.1:9999/v1 (a stand-in" in text


def test_an_engine_with_no_model_gets_no_line():
    assert "Engine models:" not in render(report("bm25"))
