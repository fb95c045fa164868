"""Is the process that runs a run still there? A run killed with kill -9 never says goodbye, so its row stays
`running`; the row records pid, host and process start time, and a reader on the same host checks them."""
from __future__ import annotations

import os
import socket
from pathlib import Path

from pydantic import BaseModel

START_TOLERANCE_S = 2.0     # /proc start times are in clock ticks from a whole-second boot time


class ProcessStamp(BaseModel):
    pid: int
    host: str
    started: float | None = None     # seconds since the epoch; None where /proc is not available


def _boot_time() -> float | None:
    try:
        for line in Path("/proc/stat").read_text().splitlines():
            if line.startswith("btime "):
                return float(line.split()[1])
    except OSError:
        pass
    return None


def _proc_stat(pid: int) -> list[str] | None:
    """Fields of /proc/PID/stat after the command name (which may hold spaces and parentheses)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()


def process_started(pid: int) -> float | None:
    fields, boot = _proc_stat(pid), _boot_time()
    if fields is None or boot is None:
        return None
    return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")     # field 22 of stat: start time in clock ticks


def current_process() -> ProcessStamp:
    return ProcessStamp(pid=os.getpid(), host=socket.gethostname(), started=process_started(os.getpid()))


def is_gone(stamp: ProcessStamp) -> bool:
    """True when the process is certainly gone: on this host, and no such pid, a zombie, or a different process
    that reuses the pid. A process on another host cannot be checked: not gone."""
    if stamp.host != socket.gethostname():
        return False
    try:
        os.kill(stamp.pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass                                        # exists, owned by another user
    fields = _proc_stat(stamp.pid)
    if fields is not None and fields[0] == "Z":      # killed, not yet reaped by its parent
        return True
    started = process_started(stamp.pid)
    return stamp.started is not None and started is not None and abs(started - stamp.started) > START_TOLERANCE_S
