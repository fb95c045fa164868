"""A throw-away PostgreSQL server for tests and benchmarks: Debian's server binaries, `initdb` into a temporary folder,
listening on 127.0.0.1 only (a free port; the Unix socket inside the folder), trust authentication for the local user
only, fsync off (the data is thrown away). `make postgres-deps` installs the binaries the way chromium is installed.

    with PostgresServer.start(folder) as server:
        url = server.create_database("t1")      # postgresql://postgres@127.0.0.1:PORT/t1
"""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import time
from pathlib import Path

NOT_FOUND = ("no PostgreSQL server binaries (initdb, pg_ctl): `make postgres-deps` installs Debian's postgresql "
             "package with apt-get (needs root)")


def server_binaries() -> Path | None:
    """The folder of initdb/pg_ctl/postgres: Debian keeps them out of PATH, under /usr/lib/postgresql/<major>/bin."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]), reverse=True)
    if found:
        return Path(found[0]).parent
    on_path = shutil.which("initdb")
    return Path(on_path).resolve().parent if on_path else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PostgresServer:
    def __init__(self, folder: Path, port: int, user: str, run_as: str | None):
        self.folder, self.port, self.user, self._run_as = folder, port, user, run_as

    @property
    def admin_url(self) -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/postgres"

    def url(self, database: str) -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    @classmethod
    def start(cls, folder: Path, *, timeout_s: float = 60) -> PostgresServer:
        binaries = server_binaries()
        if binaries is None:
            raise RuntimeError(NOT_FOUND)
        folder.mkdir(parents=True, exist_ok=True)
        # The server refuses to run as root: as root, run it as Debian's `postgres` user, owner of the folder.
        run_as = None
        if os.geteuid() == 0:
            run_as = "postgres"
            owner = pwd.getpwnam(run_as)
            os.chown(folder, owner.pw_uid, owner.pw_gid)
        user = run_as or pwd.getpwuid(os.geteuid()).pw_name
        server = cls(folder, _free_port(), user, run_as)
        data = folder / "data"
        server._run([str(binaries / "initdb"), "-D", str(data), "-U", user, "--auth=trust", "-E", "UTF8",
                     "--locale=C.UTF-8", "--no-sync"], timeout_s)
        options = (f"-c listen_addresses=127.0.0.1 -p {server.port} -k {folder} -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=100")
        server._run([str(binaries / "pg_ctl"), "-D", str(data), "-l", str(folder / "server.log"), "-o", options,
                     "-w", "-t", str(int(timeout_s)), "start"], timeout_s + 5)
        server._wait(timeout_s)
        return server

    def _run(self, command: list[str], timeout_s: float) -> None:
        if self._run_as:
            command = ["runuser", "-u", self._run_as, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, cwd=str(self.folder))
        if done.returncode != 0:
            log = self.folder / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}\n{tail}")

    def _wait(self, timeout_s: float) -> None:
        import psycopg

        deadline = time.monotonic() + timeout_s
        while True:
            try:
                psycopg.connect(self.admin_url, connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        binaries = server_binaries()
        if binaries is not None:
            try:
                self._run([str(binaries / "pg_ctl"), "-D", str(self.folder / "data"), "-m", "immediate", "-w",
                           "stop"], 30)
            except (RuntimeError, subprocess.TimeoutExpired):
                pass

    def __enter__(self) -> PostgresServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
