"""The embedded local judge: llama.cpp's OpenAI-compatible server (via xllamacpp) in a child process on 127.0.0.1.

Why a child process rather than `xllamacpp.Server` inside our own process:
- llama.cpp logs straight to the C stderr; in a child that goes to a log file, not the user's terminal;
- stopping is a plain process exit — xllamacpp has no stop(); its destructor first finishes in-flight generations;
- a native crash (abort in ggml, OOM) takes down the judge, not the evaluation run holding unsaved results;
- measured: the asyncio loop stays responsive either way (p99 loop lag 5.5 ms in-process vs 4.2 ms with a child;
  the server's C++ threads do not hold the GIL), so isolation costs only the child's interpreter start-up (~0.3 s)
  on top of the model load (~5 s).

The child exits by itself when its stdin reaches EOF, i.e. when the parent stops it or dies (even by SIGKILL), so
no orphaned server keeps the cores busy; it ignores Ctrl-C, which is the parent's to handle.

Structured output: the server honours OpenAI `response_format={"type": "json_schema", "json_schema": {"schema": …}}`
(constrained decoding via LLGuidance), as well as the llama.cpp extensions `json_schema` / `grammar` (GBNF) in the
request body, so JudgeClient needs no special case. Usage tokens come back in `usage`.
"""
from __future__ import annotations

import argparse
import atexit
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, NoReturn

from pydantic import BaseModel, Field

from rubriceval.common.errors import RubricEvalError
from rubriceval.judge.config import default_cache_dir

LOOPBACK = "127.0.0.1"


class LocalJudgeError(RubricEvalError):
    """The embedded judge could not be started."""


def _cores() -> int:
    return os.cpu_count() or 1


class LocalJudgeSettings(BaseModel):
    """Sizing for a small CPU box (the reference machine has 2 cores).

    Threads, measured on 2 cores while other CPU-bound processes ran: with 2 generation threads decoding collapsed
    to 0.4 tok/s (every token ends in a barrier all threads must reach; one descheduled thread stalls the rest),
    with 1 thread it held 8–11 tok/s. Prompt processing works in large chunks and did not collapse (16–18 tok/s with
    2 threads, 18–20 with 1), and gets both cores when the machine is idle. So: generation leaves one core free for
    our own process (parsing, embedding, the UI), prompt processing may use all cores.
    """

    n_ctx: int = Field(default=8192, ge=512)      # shared by all slots (unified KV cache), so one long prompt fits
    n_parallel: int = Field(default=2, ge=1, le=8)
    n_threads: int = Field(default_factory=lambda: max(1, min(4, _cores() - 1)), ge=1)       # generation
    n_threads_batch: int = Field(default_factory=lambda: max(1, min(8, _cores())), ge=1)      # prompt processing
    startup_timeout_s: float = Field(default=180.0, gt=0)


class LocalJudgeServer:
    """Runs `python -m rubriceval.local.judge_server` and waits until it answers /health.

    Use as a context manager, or call start()/stop(). `base_url` is the OpenAI-style root (`…/v1`).
    """

    def __init__(self, model_path: str | Path | None = None, settings: LocalJudgeSettings | None = None,
                 *, port: int = 0, log_path: str | Path | None = None):
        self.model_path = Path(model_path) if model_path else None
        self.settings = settings or LocalJudgeSettings()
        self.port = port                      # 0 → the child binds a free port chosen by the OS (no race)
        self.log_path = Path(log_path) if log_path else default_cache_dir() / "logs" / "local_judge.log"
        self._process: subprocess.Popen | None = None
        self._address: str | None = None

    @property
    def base_url(self) -> str:
        if self._address is None:
            raise LocalJudgeError("the local judge is not running; call start() first")
        return self._address + "/v1"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self) -> str:
        if self.running:
            return self.base_url
        if importlib.util.find_spec("xllamacpp") is None:
            raise LocalJudgeError("the embedded judge needs the xllamacpp package, which is not installed",
                                  hint="pip install 'rubriceval[local]', or set RUBRICEVAL_JUDGE_BASE_URL "
                                       "to use a hosted judge")
        if self.model_path is None:
            from rubriceval.local.model_files import ensure_model

            self.model_path = ensure_model()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        ready_dir = tempfile.mkdtemp(prefix="rubriceval-judge-")
        ready_file = Path(ready_dir) / "address"
        s = self.settings
        command = [sys.executable, "-m", "rubriceval.local.judge_server", "--model", str(self.model_path),
                   "--port", str(self.port), "--ctx", str(s.n_ctx), "--parallel", str(s.n_parallel),
                   "--threads", str(s.n_threads), "--threads-batch", str(s.n_threads_batch),
                   "--ready-file", str(ready_file), "--exit-on-stdin-eof"]
        env = dict(os.environ)
        # The child must import this very package even when it is run from a source checkout.
        package_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        # Append: several evaluation processes may each run a judge and share this log.
        log = self.log_path.open("ab")
        log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} judge for pid {os.getpid()}: {' '.join(command)}\n"
                  .encode())
        log.flush()
        try:
            self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT,
                                             env=env)
        finally:
            log.close()   # the child holds its own descriptor
        try:
            self._address = self._wait_until_ready(ready_file)
        except BaseException:
            self.stop()
            raise
        finally:
            ready_file.unlink(missing_ok=True)
            os.rmdir(ready_dir)
        return self.base_url

    def _wait_until_ready(self, ready_file: Path) -> str:
        deadline = time.monotonic() + self.settings.startup_timeout_s
        address: str | None = None
        while time.monotonic() < deadline:
            if self._process is None or self._process.poll() is not None:
                code = None if self._process is None else self._process.returncode
                raise LocalJudgeError(f"the local judge exited during start-up (exit code {code}): "
                                      f"{self._log_tail()}", file=str(self.log_path))
            if address is None and ready_file.is_file():
                address = ready_file.read_text(encoding="utf-8").strip() or None
            if address is not None and _healthy(address):
                return address
            time.sleep(0.1)
        raise LocalJudgeError(f"the local judge did not become ready within {self.settings.startup_timeout_s:g}s",
                              file=str(self.log_path), hint="see the log; a slow disk or low memory can cause this")

    def _log_tail(self, lines: int = 8) -> str:
        try:
            with self.log_path.open("rb") as handle:
                handle.seek(max(0, handle.seek(0, os.SEEK_END) - 16_384))
                text = handle.read().decode("utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:])

    def stop(self) -> None:
        process, self._process, self._address = self._process, None, None
        if process is None or process.poll() is not None:
            return
        if process.stdin is not None:
            try:
                process.stdin.close()   # the child's EOF watcher exits at once
            except OSError:
                pass
        try:
            process.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            pass
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)

    def __enter__(self) -> LocalJudgeServer:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _healthy(address: str) -> bool:
    try:
        with urllib.request.urlopen(address + "/health", timeout=2) as response:
            return response.status == 200 and json.loads(response.read() or b"{}").get("status") == "ok"
    except (urllib.error.URLError, OSError, ValueError):
        return False


_singleton: LocalJudgeServer | None = None
_singleton_lock = threading.Lock()


def ensure_local_judge(settings: LocalJudgeSettings | None = None) -> str:
    """base_url of the process-wide embedded judge, starting it on first use; it is stopped at interpreter exit."""
    global _singleton
    with _singleton_lock:
        if _singleton is None or not _singleton.running:
            server = LocalJudgeServer(settings=settings)
            server.start()
            if _singleton is None:
                atexit.register(_stop_singleton)
            _singleton = server
        return _singleton.base_url


def _stop_singleton() -> None:
    global _singleton
    with _singleton_lock:
        if _singleton is not None:
            _singleton.stop()
            _singleton = None


# ---------------------------------------------------------------------------------------------------------------
# Child process: `python -m rubriceval.local.judge_server --port N`


def serve(model: Path, *, port: int, n_ctx: int, n_parallel: int, n_threads: int, n_threads_batch: int) -> Any:
    """Start xllamacpp's server in this process (blocks until the model is loaded) and return it (xllamacpp ships
    no types)."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(model)
    params.hostnames = [LOOPBACK]         # never listen beyond this machine
    params.port = port
    params.n_ctx = n_ctx
    params.n_parallel = n_parallel
    params.kv_unified = True              # slots share the whole context instead of n_ctx / n_parallel each
    params.cpuparams.n_threads = n_threads
    params.cpuparams_batch.n_threads = n_threads_batch
    params.verbosity = 1
    params.ui = False
    return xllamacpp.Server(params)


def main(argv: list[str] | None = None) -> NoReturn:
    parser = argparse.ArgumentParser(description="Serve the embedded judge model on 127.0.0.1 (OpenAI-compatible).")
    parser.add_argument("--model", type=Path, default=None, help="GGUF path (default: assemble the bundled model)")
    parser.add_argument("--port", type=int, default=0, help="0 = a free port chosen by the OS")
    defaults = LocalJudgeSettings()
    parser.add_argument("--ctx", type=int, default=defaults.n_ctx)
    parser.add_argument("--parallel", type=int, default=defaults.n_parallel)
    parser.add_argument("--threads", type=int, default=defaults.n_threads, help="generation threads")
    parser.add_argument("--threads-batch", type=int, default=defaults.n_threads_batch,
                        help="prompt-processing threads")
    parser.add_argument("--ready-file", type=Path, default=None, help="write the listening address here when ready")
    parser.add_argument("--exit-on-stdin-eof", action="store_true", help="exit when the parent closes our stdin")
    args = parser.parse_args(argv)
    done = threading.Event()
    if args.exit_on_stdin_eof:
        # Managed by a parent: a Ctrl-C in the terminal reaches the whole process group, but it is the parent's
        # call whether in-flight judge calls still matter; it stops us by closing the pipe (or by dying).
        signal.signal(signal.SIGINT, signal.SIG_IGN)

        def watch_parent() -> None:
            sys.stdin.buffer.read()   # returns only at EOF: the parent closed the pipe or died
            done.set()

        threading.Thread(target=watch_parent, daemon=True).start()
    if args.model is None:
        from rubriceval.local.model_files import ensure_model

        args.model = ensure_model()
    server = serve(args.model, port=args.port, n_ctx=args.ctx, n_parallel=args.parallel, n_threads=args.threads,
                   n_threads_batch=args.threads_batch)
    address = server.listening_address
    if args.ready_file:
        tmp = args.ready_file.with_suffix(".tmp")
        tmp.write_text(address, encoding="utf-8")
        os.replace(tmp, args.ready_file)   # the parent never reads a half-written address
    print(f"local judge listening on {address}/v1", file=sys.stderr, flush=True)
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
    # Exit at once: xllamacpp's destructor would first finish any in-flight generation (minutes on a busy CPU)
    # for a client that is gone. The server holds nothing that needs flushing.
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
