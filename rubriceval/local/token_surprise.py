"""Per-token logprobs of a given text under the embedded model, for the perplexity screen (safety/perplexity.py).

llama.cpp's server cannot score a prompt's tokens without generating: measured on the bundled server, `/v1/completions`
accepts `echo: true` and ignores it (only generated tokens come back with logprobs), and `/completion` with
`n_predict: 0` still generates one token. So the text is *generated*, forced token by token: `/tokenize` gives its
natural tokens, a GBNF grammar of those token ids (`root ::= <[id]> <[id]> …`) leaves the sampler no other choice,
and `n_probs: 1` returns each forced token's logprob from the model's raw distribution (before the grammar). Tokens
that are byte fragments of a character (byte fallback: " 满" as three tokens, "⁵" as two) cannot be forced one by one —
the server fails with "Unexpected empty grammar stack" — so a run of them is forced as the characters they make up (a
grammar literal, every character \\U-escaped: the text never becomes grammar syntax); the model then spells them with
tokens of its own choice, each still with its logprob. The cost is a generation: ~3 tokens/s on the shared 2-core
machine, a few seconds per customer-service answer — which is why the screen is opt-in and its answers are cached
on disk (per model file and text).
"""
from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import httpx
from pydantic import BaseModel

from rubriceval.judge.config import default_cache_dir
from rubriceval.safety.perplexity import TokenSurprise

PREFIX = {"zh": "以下是客服机器人对用户的回答：\n", "en": "A customer-service chatbot's answer to a customer:\n"}
TIMEOUT_S = 900.0


class Scored(BaseModel):
    tokens: list[TokenSurprise]
    prompt_tokens: int
    completion_tokens: int
    cached: bool = False
    error: str | None = None        # the server refused or failed: nothing is known about this text (not cached)


def _language(text: str) -> str:
    return "zh" if any("\u4e00" <= c <= "\u9fff" for c in text) else "en"


def char_offsets(pieces: list[bytes]) -> list[tuple[int, int]]:
    """Character [start, end) of each token from its bytes (a character split over tokens belongs to the last)."""
    out, buffer, done = [], b"", 0
    for piece in pieces:
        buffer += piece
        now = len(buffer.decode("utf-8", errors="ignore"))
        out.append((done, now))
        done = now
    return out


def forcing_grammar(pieces: list[str | list[int]], ids: list[int]) -> str:
    """GBNF that leaves the sampler only the text: each whole-character token by its id, each run of byte fragments
    (`/tokenize` gives their piece as a list of bytes) as the literal of the characters they complete."""
    parts, fragment = [], b""
    for token_id, piece in zip(ids, pieces):
        if isinstance(piece, list):
            fragment += bytes(piece)
            try:
                chars = fragment.decode("utf-8")
            except UnicodeDecodeError:
                continue                        # the character goes on in the next token
            parts.append('"' + "".join(f"\\U{ord(c):08X}" for c in chars) + '"')
            fragment = b""
        else:
            if fragment:                        # never seen: a fragment the next whole token does not complete
                raise ValueError(f"token {token_id} follows an incomplete character")
            parts.append(f"<[{token_id}]>")
    if fragment:
        raise ValueError("the text ends inside a character")
    return "root ::= " + " ".join(parts)


class TokenScorer:
    """Scores texts on one llama.cpp server (`root`: its address without /v1), `concurrency` at a time."""

    def __init__(self, root: str, model_id: str, *, concurrency: int = 2, cache_dir: Path | None = None):
        self.root, self.model_id = root.rstrip("/"), model_id
        self.cache_dir = (cache_dir or default_cache_dir()) / "token_surprise"
        self._gate = asyncio.Semaphore(concurrency)

    def _cache_path(self, text: str) -> Path:
        key = hashlib.sha256(f"{self.model_id}\x00{_language(text)}\x00{text}".encode()).hexdigest()
        return self.cache_dir / key[:2] / f"{key}.json"

    async def score(self, client: httpx.AsyncClient, text: str) -> Scored:
        path = self._cache_path(text)
        if path.exists():
            return Scored.model_validate_json(path.read_text(encoding="utf-8")).model_copy(update={"cached": True})
        async with self._gate:
            try:
                scored = await self._score(client, text)
            except (httpx.HTTPError, KeyError, ValueError) as exc:
                detail = exc.response.text[:200] if isinstance(exc, httpx.HTTPStatusError) else str(exc)[:200]
                return Scored(tokens=[], prompt_tokens=0, completion_tokens=0, error=f"{type(exc).__name__}: {detail}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(scored.model_dump_json(), encoding="utf-8")
        return scored

    async def _score(self, client: httpx.AsyncClient, text: str) -> Scored:
        found = (await self._post(client, "/tokenize", {"content": text, "with_pieces": True}))["tokens"]
        if not found:
            return Scored(tokens=[], prompt_tokens=0, completion_tokens=0)
        ids, pieces = [t["id"] for t in found], [t["piece"] for t in found]
        prefix = PREFIX[_language(text)]
        fragments = sum(len(p) for p in pieces if isinstance(p, list))      # a character's bytes may each be a token
        reply = await self._post(client, "/completion", {
            "prompt": prefix, "grammar": forcing_grammar(pieces, ids), "n_predict": len(ids) + fragments + 1,
            "n_probs": 1, "temperature": 0, "cache_prompt": True})
        probs = reply.get("completion_probabilities") or []
        if probs and not (probs[-1].get("bytes") or probs[-1]["token"]):
            probs = probs[:-1]                                                  # the forced end of text
        offsets = char_offsets([bytes(p.get("bytes") or p["token"].encode()) for p in probs])
        tokens = [TokenSurprise(start=lo, end=hi, logprob=float(p["logprob"])) for (lo, hi), p in zip(offsets, probs)]
        return Scored(tokens=tokens, prompt_tokens=int(reply.get("tokens_evaluated") or 0),
                      completion_tokens=int(reply.get("tokens_predicted") or len(probs)))

    async def _post(self, client: httpx.AsyncClient, path: str, body: dict) -> dict:
        response = await client.post(self.root + path, content=json.dumps(body, ensure_ascii=False).encode(),
                                     headers={"Content-Type": "application/json"}, timeout=TIMEOUT_S)
        response.raise_for_status()
        return response.json()


def embedded_scorer(concurrency: int = 2, cache_dir: Path | None = None) -> TokenScorer:
    """A scorer on the process's embedded judge (started on first use), its cache keyed by the model file."""
    from rubriceval.local.judge_server import ensure_local_judge
    from rubriceval.local.model_files import ensure_model

    model = Path(ensure_model())
    root = ensure_local_judge().removesuffix("/v1")
    return TokenScorer(root, f"{model.name}:{model.stat().st_size}", concurrency=concurrency, cache_dir=cache_dir)
