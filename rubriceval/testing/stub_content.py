"""What the stub says, as deterministic functions of the request: token counts and embedding vectors."""
from __future__ import annotations

import hashlib
import math
import random
import re
from collections.abc import Iterable
from typing import Any

CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_LATIN_TOKEN = re.compile(r"\w+|[^\w\s]")


def rough_token_count(text: str) -> int:
    """~1.5 CJK characters per token, one token per other word or punctuation mark: crude but deterministic."""
    cjk = len(CJK.findall(text))
    rest = CJK.sub(" ", text)
    return math.ceil(cjk / 1.5) + len(_LATIN_TOKEN.findall(rest))


def message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # multi-part content: count the text parts
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def prompt_token_count(messages: list[dict]) -> int:
    # 3 tokens of framing per message, as OpenAI's own accounting roughly does.
    return sum(3 + rough_token_count(message_text(m.get("content"))) for m in messages if isinstance(m, dict))


def _text_features(text: str) -> Iterable[str]:
    lowered = text.lower()
    for word in re.findall(r"[a-z0-9]+", lowered):
        yield "w:" + word
    chars = CJK.findall(lowered)
    for i, char in enumerate(chars):
        yield "c:" + char
        if i + 1 < len(chars):
            yield "b:" + char + chars[i + 1]


def embedding_for(text: str, dim: int = 64) -> list[float]:
    """A unit vector: hashed bag of words / CJK characters and bigrams, plus a small whole-text component.

    Identical texts → identical vectors; texts sharing words → high cosine; different texts never collide exactly.
    """
    vector = [0.0] * dim
    for feature in _text_features(text):
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        vector[int.from_bytes(digest[:4], "little") % dim] += 1.0 if digest[4] & 1 else -1.0
    noise = random.Random("embedding:" + text)
    noise_vector = [noise.gauss(0.0, 1.0) for _ in range(dim)]
    bag_norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    noise_norm = math.sqrt(sum(v * v for v in noise_vector)) or 1.0
    combined = [v / bag_norm + 0.2 * n / noise_norm for v, n in zip(vector, noise_vector)]
    norm = math.sqrt(sum(v * v for v in combined))
    return [v / norm for v in combined]
