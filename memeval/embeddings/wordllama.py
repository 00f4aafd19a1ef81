"""WordLlama's 256-dimension static embeddings: a fast, semantically weaker tier.

A text's vector is a pooled sum of token vectors (no attention), so ten thousand texts embed in
a fraction of a second; its similarity is cruder than MiniLM's. The wheel ships its weights
and its tokenizer config, but looks for the config under `tokenizer/` while shipping it under
`tokenizers/`, then tries to download it: pointed at its own package folder as the cache, and
with downloads off, it loads what it ships and reaches nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memeval.errors import UsageError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

NAME = "dleemiller/word-llama-l2-supercat"
DIMENSIONS = 256


class WordLlama:
    name = NAME
    dimensions = DIMENSIONS

    def __init__(self) -> None:
        try:
            import wordllama
        except ImportError:
            raise UsageError(
                "the `wordllama` embedder needs the `wordllama` package, which is not installed",
                fix="pip install 'memeval[wordllama]'",
            ) from None
        shipped = Path(wordllama.__file__).parent
        self.model = wordllama.WordLlama.load(
            cache_dir=shipped, dim=DIMENSIONS, disable_download=True
        )

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        import numpy as np

        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        return np.asarray(self.model.embed(texts, norm=True), dtype=np.float32)
