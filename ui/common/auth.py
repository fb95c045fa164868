"""Who may reach an app: the loopback rule every app (audit, team, studio) applies before it serves."""
from __future__ import annotations

import ipaddress
from collections.abc import Callable

from rubriceval import RubricEvalError

Auth = Callable[[str, str], bool] | tuple[str, str] | list[tuple[str, str]]


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def require_auth_off_loopback(host: str, auth: Auth | None) -> None:
    """Anyone on the network could read customer conversations and sign audits with any name: refuse."""
    if not is_loopback(host) and auth is None:
        raise RubricEvalError(f"refusing to serve the audit app on {host} without authentication",
                              field="host", hint="pass auth (user/password), or bind to 127.0.0.1")
