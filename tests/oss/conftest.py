"""The stand-in model service as a real HTTP server on 127.0.0.1, shared by the module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module")
def model_url() -> Iterator[str]:
    from memeval.models.server import running  # here: collection (once per xdist worker) skips it

    with running() as url:
        yield url
