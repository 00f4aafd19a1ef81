"""The int8 tier (`minilm-int8`, the default): the published pair within 0.01, vectors close to
float32's, one vector a text whatever its batch, less CPU than float32, a load under two
seconds of CPU, a name of its own (so a cache row of one tier never answers for the other),
served by default, and a one-line fix when onnxruntime is missing."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

from memeval import embeddings
from memeval.embeddings import weights
from memeval.embeddings.minilm import MiniLM
from memeval.embeddings.minilm_int8 import NAME, MiniLMInt8
from memeval.models.server import running

PAIR = ["A man is eating food.", "A man is eating a piece of bread."]
WORDS = (
    "Caroline Melanie went to the support group on Tuesday after her painting class and "
    "talked about adopting a dog moving to Bergen the lab her sister a greyhound named Biscuit "
    "camping trip summer pottery concert guitar school counseling career 7 May 2023 why"
).split()


def sentences(count: int, seed: int = 7) -> list[str]:
    pick = random.Random(seed)
    return [" ".join(pick.choices(WORDS, k=pick.randint(3, 60))) + "." for _ in range(count)]


@pytest.fixture(scope="module")
def exact() -> MiniLM:
    return MiniLM(weights.ensure())


@pytest.fixture(scope="module")
def fast() -> MiniLMInt8:
    return MiniLMInt8(weights.ensure())


def test_reproduces_the_published_pair_and_stays_close_to_float32(fast, exact):
    texts = [*PAIR, "A man is riding a horse.", *sentences(40), "Hi.", ""]
    vectors = fast.embed(texts)
    assert vectors.shape == (len(texts), 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert float(vectors[0] @ vectors[1]) == pytest.approx(0.755, abs=0.01)
    assert float(vectors[0] @ vectors[2]) < 0.4
    agreement = (vectors * exact.embed(texts)).sum(axis=1)
    assert agreement.min() > 0.98 and agreement.mean() > 0.99


def test_a_text_gets_one_vector_alone_or_in_any_batch(fast):
    texts = [*sentences(30, seed=3), "ok " * 400, "Hi."]
    together = fast.embed(texts)
    alone = np.vstack([fast.embed([t]) for t in texts])
    shuffled = fast.embed(texts[::-1])[::-1]
    assert np.allclose(together, alone, atol=1e-5)
    assert np.allclose(together, shuffled, atol=1e-5)


def test_costs_less_cpu_than_float32(fast, exact):
    texts = sentences(300, seed=11)
    fast.embed(texts[:5])  # first-call setup is not what is compared
    exact.embed(texts[:5])
    started = time.process_time()
    fast.embed(texts)
    int8 = time.process_time() - started
    started = time.process_time()
    exact.embed(texts)
    float32 = time.process_time() - started
    assert int8 < 0.8 * float32, (int8, float32)


def test_has_its_own_name_and_cache_rows(fast, exact, tmp_path, monkeypatch):
    assert embeddings.model_name("minilm-int8") == NAME != weights.MODEL
    assert NAME.startswith(weights.MODEL)  # still names the model it computes
    monkeypatch.setenv("MEMEVAL_CACHE", str(tmp_path))
    int8, float32 = embeddings.Cached(fast), embeddings.Cached(exact)
    assert int8.store.path == float32.store.path  # one file, rows keyed by model
    int8.embed(PAIR)
    float32.embed(PAIR)
    assert (int8.computed, float32.computed) == (2, 2)
    int8.embed(PAIR)
    assert int8.computed == 2


def test_loads_in_under_two_seconds_of_cpu_imports_included():
    """In a fresh process, from importing onnxruntime and onnx to a session ready to embed:
    the hash check of both files, the weights, the tokenizer, the graph and its session."""
    weights.ensure()
    script = (
        "import time; from memeval.embeddings import weights; files = weights.ensure(); "
        "started = time.process_time(); "
        "from memeval.embeddings.minilm_int8 import MiniLMInt8; MiniLMInt8(files); "
        "print(time.process_time() - started)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert float(done.stdout) < 2.0, done.stdout


def test_the_model_service_serves_it_by_default_and_by_name():
    assert embeddings.DEFAULT == "minilm-int8"
    with running() as url:
        reply = httpx.post(f"{url}/embeddings", json={"model": "any", "input": PAIR}).json()
        listed = [m["id"] for m in httpx.get(f"{url}/models").json()["data"]]
    assert reply["model"] == NAME and NAME in listed
    first, second = (np.array(d["embedding"]) for d in reply["data"])
    assert float(first @ second) == pytest.approx(0.755, abs=0.01)


def test_without_onnxruntime_the_default_service_says_what_to_install_in_one_line():
    # `None` in sys.modules makes `import onnxruntime` fail as if it were not installed.
    script = (
        "import sys; sys.modules['onnxruntime'] = None; "
        "sys.argv = ['memeval', 'models', 'serve', '--port', '0']; "
        "from memeval.cli import main; main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 2
    assert "needs onnxruntime" in done.stderr and "pip install 'onnxruntime" in done.stderr
    assert "float32 tier `minilm`" in done.stderr
    assert "Traceback" not in done.stderr
