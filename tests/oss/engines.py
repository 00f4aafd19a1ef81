"""The in-process engines over the stand-in models, as tests build them."""

from __future__ import annotations

import importlib.util
import os

import pytest

from memeval.engines import registry
from memeval.engines.base import Engine

# Engines keeping an embedded database in a folder of their own.
ENGINES = ("mem0-oss", "graphiti")
# cognee is not in [test]: its wheel replaces the `kuzu` package graphiti's driver needs.
COGNEE = pytest.param(
    "cognee",
    marks=pytest.mark.skipif(
        importlib.util.find_spec("cognee") is None,
        reason="cognee is not installed: pip install 'memeval[cognee]' in an environment "
        "without memeval[graphiti] (cognee's wheel overwrites the kuzu package)",
    ),
)
# Letta 0.11.7's server needs mcp 1.x where [test] has mcp 2: it runs from an environment of
# its own, named by LETTA_ENGINE_SERVER_PYTHON, or from this one when it holds `letta`.
LETTA_READY = importlib.util.find_spec("letta_client") is not None and (
    importlib.util.find_spec("letta") is not None or "LETTA_ENGINE_SERVER_PYTHON" in os.environ
)
LETTA = pytest.param(
    "letta",
    marks=pytest.mark.skipif(
        not LETTA_READY,
        reason="Letta is not installed: pip install 'memeval[letta]' (letta-client and the "
        "letta 0.11.7 server), or letta-client here and LETTA_ENGINE_SERVER_PYTHON naming "
        "the Python of an environment with 'letta[server,sqlite]==0.11.7'",
    ),
)
# Engines of issue 26; LangMem's store lives in the process, cognee's in a folder, Letta's in
# its server's folder.
NEXT = ("langmem", COGNEE, LETTA)


def engine_at(name: str, model_url: str, store_dir: str) -> Engine:
    options = f"url={model_url}&store_dir={store_dir}"
    return registry.create(f"{name}&{options}" if "?" in name else f"{name}?{options}")
