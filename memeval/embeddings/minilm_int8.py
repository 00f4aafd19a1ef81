"""all-MiniLM-L6-v2 with its matrix products in int8, in onnxruntime: the default tier.

The same checked weights, tokenizer, batching and pooling as `memeval.embeddings.minilm`; only
the six layers run differently. They are built here, from those weights, into an ONNX graph
(nothing is downloaded, no exported model is trusted) in which every dense layer's weights are
int8 with one scale a column, and its input is quantized to 8 bits one token at a time, when
it arrives. The products then cost about a quarter of float32's, which float32 cannot get below
on a CPU.

Why one scale a token, not onnxruntime's stock dynamic quantization (one scale a whole input):
a batch here is thousands of tokens from hundreds of texts, and one token with an outlying
value would coarsen every other text's numbers, so a text's vector would depend on the texts
it was batched with. Measured on the published pair, the stock form gave 0.772 where the model
gives 0.755; one scale a token gives 0.755, and the same vector alone or in any batch.
Attention, layer normalization, GELU (erf, as BERT has it) and pooling stay in float32.

The vectors are close to float32's, not equal, so the tier has its own name, and so its own
rows in the vector cache. onnxruntime and onnx are memeval's own dependencies (neither brings
torch); building the graph and its session costs about 0.15 s of CPU, so it is built at each
load rather than kept on disk.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from memeval.embeddings import minilm, weights
from memeval.embeddings.minilm import DIMENSIONS, EPSILON, HEADS, Matrix
from memeval.errors import UsageError

if TYPE_CHECKING:
    from onnx import ModelProto, NodeProto, TensorProto

NAME = weights.INT8_MODEL
FIX = (
    "reinstall memeval's dependencies (pip install 'onnxruntime>=1.32' 'onnx>=1.23'), or choose "
    "the float32 tier `minilm`"
)
OPSET = 18
THREADS = 2
"""onnxruntime's intra-op threads. They are told not to spin while they wait for work: on a
shared two-core machine a spinning thread burns CPU that another process needed."""


class MiniLMInt8(minilm.MiniLM):
    name = NAME

    def __init__(self, files: weights.ModelFiles) -> None:
        try:
            import onnx  # noqa: F401  # the graph builder
            import onnxruntime
        except ImportError:
            raise UsageError(
                "the `minilm-int8` embedder needs onnxruntime and onnx, which are not installed",
                fix=FIX,
            ) from None
        super().__init__(files)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = THREADS
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        graph = _Graph().model(self.layers).SerializeToString()
        self.session = onnxruntime.InferenceSession(
            graph, options, providers=["CPUExecutionProvider"]
        )
        self.layers = []  # the float32 copies: the session holds its own

    def _forward(self, batch: list[list[int]]) -> Matrix:
        x, mask = self._embedded(batch)
        size, width = mask.shape
        x = minilm.layer_norm(x.reshape(-1, DIMENSIONS), *self.norm).reshape(size, width, -1)
        feed = {"x": x, "bias": minilm.attention_bias(mask)}
        (hidden,) = self.session.run(None, feed)
        return minilm.mean_unit((hidden * mask[..., None]).sum(axis=1), mask)


class _Graph:
    """Six BERT layers as ONNX nodes: input `x` (texts, width, 384) after the embedding
    layer, `bias` the attention mask as `attention_bias` makes it; output `hidden`."""

    def __init__(self) -> None:
        self.nodes: list[NodeProto] = []
        self.constants: list[TensorProto] = []

    def constant(self, name: str, value: Any) -> str:
        from onnx import numpy_helper

        self.constants.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(self, op: str, inputs: list[str], output: str, **attributes: Any) -> str:
        from onnx import helper

        domain = "com.microsoft" if op in ("Gelu", "MatMulIntegerToFloat") else ""
        self.nodes.append(helper.make_node(op, inputs, [output], domain=domain, **attributes))
        return output

    def model(self, layers: list[tuple[Any, ...]]) -> ModelProto:
        from onnx import TensorProto, helper

        head = DIMENSIONS // HEADS
        self.constant("qkv_shape", np.array([0, 0, 3, HEADS, head], dtype=np.int64))
        self.constant("heads_joined", np.array([0, 0, DIMENSIONS], dtype=np.int64))
        self.constant("scale", np.float32(1 / math.sqrt(head)))
        self.constant("rows", np.array([-1], dtype=np.int64))
        self.constant("last", np.array([1], dtype=np.int64))
        self.constant("tiny", np.float32(1e-12))
        self.constant("levels", np.float32(127))
        self.constant("one", np.float32(1))
        self.constant("u8_zero", np.uint8(128))
        self.constant("zero", np.array([0], dtype=np.int64))
        self.constant("two", np.array([2], dtype=np.int64))
        # (texts, width) of this batch, to fold a product's rows back into texts.
        self.node("Slice", [self.node("Shape", ["x"], "x_shape"), "zero", "two"], "texts_width")
        x = "x"
        for n, layer in enumerate(layers):
            qkv, qkv_b, out_w, out_b, norm1, up_w, up_b, down_w, down_b, norm2 = layer
            p = f"layer{n}."
            mixed = self.dense(x, qkv, qkv_b, p + "qkv")
            mixed = self.node("Reshape", [mixed, "qkv_shape"], p + "qkv_heads")
            mixed = self.node("Transpose", [mixed], p + "qkv_t", perm=[2, 0, 3, 1, 4])
            q, k, v = (
                self.node("Gather", [mixed, self.constant(p + f"i{i}", np.int64(i))], p + name)
                for i, name in enumerate("qkv")
            )
            keys = self.node("Transpose", [k], p + "k_t", perm=[0, 1, 3, 2])
            scores = self.node("MatMul", [q, keys], p + "scores")
            scores = self.node("Mul", [scores, "scale"], p + "scaled")
            scores = self.node("Add", [scores, "bias"], p + "masked")
            attention = self.node("Softmax", [scores], p + "attention", axis=-1)
            context = self.node("MatMul", [attention, v], p + "context")
            context = self.node("Transpose", [context], p + "context_t", perm=[0, 2, 1, 3])
            context = self.node("Reshape", [context, "heads_joined"], p + "context_joined")
            attended = self.dense(context, out_w, out_b, p + "out")
            x = self.norm(self.node("Add", [attended, x], p + "res1"), norm1, p + "norm1")
            hidden = self.node("Gelu", [self.dense(x, up_w, up_b, p + "up")], p + "gelu")
            down = self.dense(hidden, down_w, down_b, p + "down")
            x = self.norm(self.node("Add", [down, x], p + "res2"), norm2, p + "norm2")
        self.node("Identity", [x], "hidden")
        floats = TensorProto.FLOAT
        graph = helper.make_graph(
            self.nodes,
            "all-MiniLM-L6-v2-int8",
            [
                helper.make_tensor_value_info("x", floats, ["texts", "width", DIMENSIONS]),
                helper.make_tensor_value_info("bias", floats, ["texts", 1, 1, "width"]),
            ],
            [helper.make_tensor_value_info("hidden", floats, ["texts", "width", DIMENSIONS])],
            self.constants,
        )
        opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)]
        return helper.make_model(graph, opset_imports=opsets, ir_version=9)

    def norm(self, x: str, norm: tuple[Matrix, Matrix], name: str) -> str:
        gain, shift = (self.constant(name + s, t) for s, t in zip((".g", ".b"), norm, strict=True))
        return self.node("LayerNormalization", [x, gain, shift], name, axis=-1, epsilon=EPSILON)

    def dense(self, x: str, w: Matrix, bias: Matrix, name: str) -> str:
        """x @ w + bias with w int8 (one scale a column) and each row of x quantized to 8
        bits with its own scale (symmetric, stored as uint8 around 128, the form the int8
        kernels of x86 take)."""
        rows_in, columns = w.shape
        column_scale = np.maximum(np.abs(w).max(axis=0) / 127, 1e-12).astype(np.float32)
        quantized = np.clip(np.round(w / column_scale), -127, 127).astype(np.int8)
        flat = self.constant(name + ".flat", np.array([-1, rows_in], dtype=np.int64))
        x2 = self.node("Reshape", [x, flat], name + ".x")
        peak = self.node(
            "ReduceMax", [self.node("Abs", [x2], name + ".abs"), "last"], name + ".peak"
        )
        row_scale = self.node(
            "Div",
            [self.node("Max", [peak, "tiny"], name + ".floor"), "levels"],
            name + ".row_scale",
        )
        scales = self.node("Reshape", [row_scale, "rows"], name + ".scales")
        zeros = self.node(
            "Expand", ["u8_zero", self.node("Shape", [scales], name + ".n")], name + ".zeros"
        )
        x8 = self.node("QuantizeLinear", [x2, scales, zeros], name + ".x8", axis=0)
        y = self.node(
            "MatMulIntegerToFloat",
            [
                x8,
                self.constant(name + ".w", quantized),
                "one",
                self.constant(name + ".s", column_scale),
                "u8_zero",
            ],
            name + ".xw",
        )
        y = self.node("Mul", [y, row_scale], name + ".scaled")
        y = self.node("Add", [y, self.constant(name + ".bias", bias)], name + ".biased")
        back = self.node(
            "Concat",
            ["texts_width", self.constant(name + ".cols", np.array([columns], dtype=np.int64))],
            name + ".shape",
            axis=0,
        )
        return self.node("Reshape", [y, back], name)
