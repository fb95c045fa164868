"""What machine a benchmark ran on: cores, CPU model, RAM, load — printed with every result."""
from __future__ import annotations

import os
import platform
import sys

from pydantic import BaseModel


class Machine(BaseModel):
    nproc: int
    cpu_model: str
    ram_gib: float
    python: str
    platform: str
    load_average: tuple[float, float, float]


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _ram_gib() -> float:
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return 0.0


def describe() -> Machine:
    return Machine(nproc=len(os.sched_getaffinity(0)), cpu_model=_cpu_model(), ram_gib=_ram_gib(),
                   python=sys.version.split()[0], platform=platform.platform(),
                   load_average=tuple(round(x, 2) for x in os.getloadavg()))
