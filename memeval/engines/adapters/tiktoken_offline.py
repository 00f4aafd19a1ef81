"""tiktoken's encodings without the network, for the engines whose libraries count tokens
with it (cognee in the worker, Letta's server in its child process).

tiktoken downloads `cl100k_base` and `o200k_base` from `openaipublic.blob.core.windows.net` on
first use unless it finds them in `TIKTOKEN_CACHE_DIR`. `bpe-openai`, a memeval dependency,
ships both byte for byte (tiktoken checks their SHA-256), so the cache is filled from there.
"""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

ENCODINGS = ("cl100k_base", "o200k_base")
TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"


def tiktoken_cache(folder: Path) -> Path:
    """tiktoken's cache (a file per encoding, named by the SHA-1 of its URL) from the
    encodings `bpe-openai` ships, so tiktoken never downloads them."""
    import bpe_openai

    data = Path(bpe_openai.__file__).parent / "data"
    folder.mkdir(parents=True, exist_ok=True)
    for name in ENCODINGS:
        key = hashlib.sha1(TIKTOKEN_URL.format(name).encode()).hexdigest()
        (folder / key).write_bytes(gzip.decompress((data / f"{name}.tiktoken.gz").read_bytes()))
    return folder
