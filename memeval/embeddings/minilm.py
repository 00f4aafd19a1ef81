"""all-MiniLM-L6-v2 in numpy: six BERT layers, mean pooling, unit length, no torch.

This is the sentence-transformer as published (Transformer, Pooling with mean of the tokens,
Normalize; at most 256 word pieces a text), computed in float32 with the model's own WordPiece
tokenizer from the `tokenizers` library. Texts are sorted by length and run in batches, so
padding costs little and every matrix product is large enough for BLAS to run at speed; the
dense layers see only real tokens (padding is dropped before them and put back for attention).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from memeval.embeddings import weights

if TYPE_CHECKING:
    from tokenizers import Tokenizer

NAME = weights.MODEL
DIMENSIONS = weights.DIMENSIONS
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
LAYERS = 6
HEADS = 12
EPSILON = 1e-12
BATCH_TOKENS = 8192  # padded tokens a batch may hold: attention stays small, BLAS stays busy
SMALL_TOKENS = 2048
"""Below this many tokens a call runs BLAS on one thread. A second thread on matrices this
small mostly spins waiting for work: measured here on a loaded two-core machine, one question
cost 229 ms of CPU with two BLAS threads and 12 ms with one."""

Matrix = NDArray[np.float32]


class MiniLM:
    name = NAME
    dimensions = DIMENSIONS

    def __init__(self, files: weights.ModelFiles) -> None:
        from safetensors.numpy import load
        from tokenizers import Tokenizer

        raw = weights.verified(
            "model.safetensors", files.path("model.safetensors").read_bytes(), files.folder
        )
        tensors = load(raw)
        spec = weights.verified(
            "tokenizer.json", files.path("tokenizer.json").read_bytes(), files.folder
        )
        self.tokenizer: Tokenizer = Tokenizer.from_str(spec.decode())
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self._load(tensors)
        from threadpoolctl import ThreadpoolController

        self._threads = ThreadpoolController()

    def _load(self, t: dict[str, np.ndarray]) -> None:
        def w(key: str) -> Matrix:
            return np.ascontiguousarray(t[key], dtype=np.float32)

        self.words = w("embeddings.word_embeddings.weight")
        self.positions = w("embeddings.position_embeddings.weight")
        self.token_type = w("embeddings.token_type_embeddings.weight")[0]
        self.norm = (w("embeddings.LayerNorm.weight"), w("embeddings.LayerNorm.bias"))
        self.layers = []
        for n in range(LAYERS):
            p = f"encoder.layer.{n}."
            attn, post = p + "attention.self.", p + "attention.output."
            # query, key and value in one product: one large matmul instead of three.
            qkv = np.concatenate([w(attn + f"{x}.weight") for x in ("query", "key", "value")])
            qkv_bias = np.concatenate([w(attn + f"{x}.bias") for x in ("query", "key", "value")])
            self.layers.append(
                (
                    np.ascontiguousarray(qkv.T),
                    qkv_bias,
                    np.ascontiguousarray(w(post + "dense.weight").T),
                    w(post + "dense.bias"),
                    (w(post + "LayerNorm.weight"), w(post + "LayerNorm.bias")),
                    np.ascontiguousarray(w(p + "intermediate.dense.weight").T),
                    w(p + "intermediate.dense.bias"),
                    np.ascontiguousarray(w(p + "output.dense.weight").T),
                    w(p + "output.dense.bias"),
                    (w(p + "output.LayerNorm.weight"), w(p + "output.LayerNorm.bias")),
                )
            )

    def embed(self, texts: list[str]) -> Matrix:
        """One unit vector per text, in the order given."""
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        ids = [e.ids for e in self.tokenizer.encode_batch(texts, add_special_tokens=True)]
        if sum(map(len, ids)) < SMALL_TOKENS:
            with self._threads.limit(limits=1, user_api="blas"):
                return self._batches(ids, out)
        return self._batches(ids, out)

    def _batches(self, ids: list[list[int]], out: Matrix) -> Matrix:
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        start = 0
        while start < len(order):
            end = start
            while end < len(order) and len(ids[order[end]]) * (end - start + 1) <= BATCH_TOKENS:
                end += 1
            end = max(end, start + 1)
            batch = order[start:end]
            out[batch] = self._forward([ids[i] for i in batch])
            start = end
        return out

    def _embedded(self, batch: list[list[int]]) -> tuple[Matrix, NDArray[np.bool_]]:
        """The batch padded to its longest text: each token's input to the first layer,
        (texts, width, 384), and which tokens are real."""
        size, width = len(batch), max(len(b) for b in batch)
        mask = np.zeros((size, width), dtype=bool)
        tokens = np.zeros((size, width), dtype=np.int64)
        for row, piece in enumerate(batch):
            tokens[row, : len(piece)] = piece
            mask[row, : len(piece)] = True
        x = self.words[tokens] + self.positions[:width] + self.token_type
        return x, mask

    def _forward(self, batch: list[list[int]]) -> Matrix:
        x, mask = self._embedded(batch)
        size, width = mask.shape
        real = mask.reshape(-1)
        # Dense layers run on real tokens only, flattened: (tokens, 384).
        x = layer_norm(x.reshape(-1, DIMENSIONS)[real], *self.norm)
        bias = attention_bias(mask)
        head = DIMENSIONS // HEADS
        scale = np.float32(1 / math.sqrt(head))
        for qkv, qkv_b, out_w, out_b, norm1, up_w, up_b, down_w, down_b, norm2 in self.layers:
            projected = _padded(x @ qkv + qkv_b, real, size, width)
            q, k, v = (
                projected[..., i * DIMENSIONS : (i + 1) * DIMENSIONS]
                .reshape(size, width, HEADS, head)
                .transpose(0, 2, 1, 3)
                for i in range(3)
            )
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale + bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(-1, DIMENSIONS)[real]
            x += context @ out_w
            x += out_b
            x = layer_norm(x, *norm1)
            hidden = x @ up_w
            hidden += up_b
            x += _gelu(hidden) @ down_w
            x += down_b
            x = layer_norm(x, *norm2)
        return mean_unit(_padded(x, real, size, width).sum(axis=1), mask)


def attention_bias(mask: NDArray[np.bool_]) -> Matrix:
    """Added to attention scores: padding gets no weight. (texts, 1, 1, width)"""
    return np.where(mask, 0.0, -1e9).astype(np.float32)[:, None, None, :]


def mean_unit(summed: Matrix, mask: NDArray[np.bool_]) -> Matrix:
    """Sentence-transformers' pooling: the mean of the real tokens' vectors, at unit length."""
    pooled = summed / mask.sum(axis=1, keepdims=True).astype(np.float32)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    unit: NDArray[np.float32] = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
    return unit


def _padded(x: Matrix, real: NDArray[np.bool_], size: int, width: int) -> Matrix:
    full = np.zeros((size * width, x.shape[1]), dtype=np.float32)
    full[real] = x
    return full.reshape(size, width, x.shape[1])


def layer_norm(x: Matrix, gain: Matrix, shift: Matrix) -> Matrix:
    """In place: a batch of LoCoMo's size is a hundred thousand rows, and every temporary
    array costs as much as the arithmetic."""
    x -= x.mean(axis=-1, keepdims=True)
    scale = np.square(x).mean(axis=-1, keepdims=True)
    scale += EPSILON
    np.sqrt(scale, out=scale)
    x /= scale
    x *= gain
    x += shift
    return x


def _gelu(x: Matrix) -> Matrix:
    """GELU by its tanh form, in place. BERT's is x·Φ(x) with erf; the two differ by under
    1e-3 at any input, which moves no cosine here past its third decimal, and the tanh form
    costs a third of an erf built from numpy's functions (numpy has no erf)."""
    inner = np.square(x)
    inner *= np.float32(0.044715)
    inner += 1
    inner *= x
    inner *= np.float32(math.sqrt(2 / math.pi))
    np.tanh(inner, out=inner)
    inner += 1
    x *= inner
    x *= np.float32(0.5)
    return x
