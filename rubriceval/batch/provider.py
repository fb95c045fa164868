"""An OpenAI-compatible Batch API: `/v1/files` (upload, content download) and `/v1/batches` (create, retrieve,
cancel, list), over httpx. OpenAI and DashScope's compatible mode speak it; so does the loopback stub.

Every call raises `BatchProviderError` (with the HTTP status, or the connection error) on failure, after
`retries` attempts for the errors worth retrying (connection, 429, 5xx); a 4xx is reported at once.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field

from rubriceval.batch.files import ENDPOINT
from rubriceval.common.errors import RubricEvalError


class BatchProviderError(RubricEvalError):
    """The Batch API refused or could not be reached; nothing recorded as done was lost (collect again later)."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message, field="judge.base_url",
                         hint="nothing is lost: run `rubriceval batch collect RUN` again when the provider answers")
        self.status = status


class BatchInfo(BaseModel):
    """What the provider says about a batch (the fields rubriceval reads; others are ignored)."""

    model_config = ConfigDict(extra="ignore")

    id: str
    status: str
    input_file_id: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    request_counts: dict[str, int] = Field(default_factory=dict)
    metadata: dict[str, str] | None = None
    errors: Any = None


class BatchProvider:
    """`BatchProvider(base_url, api_key)`: base_url is the API root, e.g. https://api.openai.com/v1."""

    def __init__(self, base_url: str, api_key: str | None = None, *, timeout_s: float = 300.0, retries: int = 3,
                 backoff_s: float = 1.0):
        self.base_url = base_url.rstrip("/")
        self.retries = retries
        self.backoff_s = backoff_s
        headers = {"Authorization": f"Bearer {api_key or 'not-needed'}"}
        self._http = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout_s)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> BatchProvider:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        last: BatchProviderError | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                response = self._http.request(method, path, **kwargs)
            except httpx.HTTPError as exc:
                last = BatchProviderError(f"{method} {path}: {type(exc).__name__}: {exc}")
                continue
            if response.status_code < 400:
                return response
            last = BatchProviderError(f"{method} {path}: HTTP {response.status_code}: {response.text[:300]}",
                                      status=response.status_code)
            if response.status_code != 429 and response.status_code < 500:
                break
        assert last is not None
        raise last

    # -- files ----------------------------------------------------------------------------------------------------
    def upload(self, path: Path) -> str:
        """Upload a request file (purpose=batch); returns the file id."""
        with open(path, "rb") as handle:
            response = self._request("POST", "/files", data={"purpose": "batch"},
                                     files={"file": (Path(path).name, handle, "application/jsonl")})
        return response.json()["id"]

    def download(self, file_id: str, destination: Path) -> Path:
        """Stream a file's content to `destination` (written as .part, renamed when whole)."""
        partial = destination.with_name(destination.name + ".part")
        for attempt in range(self.retries + 1):
            try:
                with self._http.stream("GET", f"/files/{file_id}/content") as response:
                    if response.status_code >= 400:
                        response.read()
                        raise BatchProviderError(f"GET /files/{file_id}/content: HTTP {response.status_code}: "
                                                 f"{response.text[:300]}", status=response.status_code)
                    with open(partial, "wb") as handle:
                        for chunk in response.iter_bytes(1 << 20):
                            handle.write(chunk)
                partial.replace(destination)
                return destination
            except httpx.HTTPError as exc:
                if attempt == self.retries:
                    raise BatchProviderError(f"GET /files/{file_id}/content: {type(exc).__name__}: {exc}") from exc
                time.sleep(self.backoff_s * 2 ** attempt)
        return destination

    # -- batches --------------------------------------------------------------------------------------------------
    def create(self, input_file_id: str, *, completion_window: str = "24h",
               metadata: dict[str, str] | None = None) -> BatchInfo:
        body = {"input_file_id": input_file_id, "endpoint": ENDPOINT, "completion_window": completion_window,
                "metadata": metadata or {}}
        return BatchInfo.model_validate(self._request("POST", "/batches", json=body).json())

    def retrieve(self, batch_id: str) -> BatchInfo:
        return BatchInfo.model_validate(self._request("GET", f"/batches/{batch_id}").json())

    def cancel(self, batch_id: str) -> BatchInfo:
        return BatchInfo.model_validate(self._request("POST", f"/batches/{batch_id}/cancel").json())

    def find(self, input_file_id: str, max_pages: int = 20) -> BatchInfo | None:
        """The batch already created from this input file, if any (a process killed right after creating a batch
        has not recorded its id: it is found here instead of being created twice)."""
        after: str | None = None
        for _ in range(max_pages):
            params: dict[str, Any] = {"limit": 100, **({"after": after} if after else {})}
            page = self._request("GET", "/batches", params=params).json()
            for item in page.get("data", []):
                if item.get("input_file_id") == input_file_id:
                    return BatchInfo.model_validate(item)
            if not page.get("has_more") or not page.get("data"):
                return None
            after = page["data"][-1]["id"]
        return None
