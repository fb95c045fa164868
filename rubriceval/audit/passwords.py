"""Salted password hashes and the auth file of the team audit app.

One user a line, `name:role:scrypt$16384$8$1$<salt>$<hash>` (salt and hash base64), written by
`rubriceval audit-user add NAME --role lead`; `#` starts a comment. scrypt (hashlib, no dependency) with a random
16-byte salt per user: the file leaks no password and two users with one password get different lines. A line of
the old `user:password` form is refused with the command that replaces it, so no plain password is ever read.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import os
from pathlib import Path

from pydantic import BaseModel

from rubriceval.common.errors import RubricEvalError
from rubriceval.store.team_models import ROLES, Role

SCRYPT_N, SCRYPT_R, SCRYPT_P, KEY_BYTES, SALT_BYTES = 2 ** 14, 8, 1, 32, 16
MIN_PASSWORD = 8


class AuthEntry(BaseModel):
    name: str
    role: Role
    password_hash: str


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def hash_password(password: str) -> str:
    salt = os.urandom(SALT_BYTES)
    key = hashlib.scrypt(password.encode(), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=KEY_BYTES)
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${_b64(salt)}${_b64(key)}"


def verify_password(password: str, encoded: str) -> bool:
    """Constant-time comparison; a malformed hash never matches."""
    try:
        scheme, n, r, p, salt, key = encoded.split("$")
        if scheme != "scrypt":
            return False
        expected = base64.b64decode(key)
        got = hashlib.scrypt(password.encode(), salt=base64.b64decode(salt), n=int(n), r=int(r), p=int(p),
                             dklen=len(expected))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, expected)


_DUMMY_HASH = hash_password("no user has this password")


def burn_time(password: str) -> None:
    """The cost of one verification, for an unknown user, so timing does not tell which names exist."""
    verify_password(password, _DUMMY_HASH)


def check_name(name: str, *, file: str | None = None, line: int | None = None) -> str:
    cleaned = " ".join((name or "").split())
    if not cleaned or ":" in cleaned or len(cleaned) > 80:
        raise RubricEvalError(f"user name {name!r} must be 1–80 characters without ':'", file=file, line=line,
                              field="name")
    return cleaned


def read_auth_file(path: str | Path) -> dict[str, AuthEntry]:
    """name → entry; every bad line is an error naming the file, the line and the field."""
    path = Path(path)
    if not path.is_file():
        raise RubricEvalError("auth file not found", file=str(path), hint="create it with `rubriceval audit-user add`")
    entries: dict[str, AuthEntry] = {}
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(":", 2)
        if len(parts) == 2:
            raise RubricEvalError("plain `user:password` lines are no longer read (passwords are stored hashed)",
                                  file=str(path), line=number, field="password",
                                  hint=f"`rubriceval audit-user add {parts[0]} --role lead --auth-file {path}`")
        if len(parts) != 3 or not parts[2].startswith("scrypt$"):
            raise RubricEvalError("each line must be name:role:scrypt$… (written by `rubriceval audit-user add`)",
                                  file=str(path), line=number)
        name = check_name(parts[0], file=str(path), line=number)
        if parts[1] not in ROLES:
            raise RubricEvalError(f"unknown role {parts[1]!r}", file=str(path), line=number, field="role",
                                  hint="expert, lead or admin")
        if name in entries:
            raise RubricEvalError(f"user {name} appears twice", file=str(path), line=number, field="name")
        entries[name] = AuthEntry(name=name, role=parts[1], password_hash=parts[2])
    if not entries:
        raise RubricEvalError("the auth file names no user", file=str(path),
                              hint="add one with `rubriceval audit-user add NAME --role lead`")
    return entries


def write_user(path: str | Path, name: str, role: Role, password: str) -> bool:
    """Add a user or replace their role and password (other lines kept as they are); True if the user is new.
    The file is readable by its owner only."""
    name = check_name(name)
    if role not in ROLES:
        raise RubricEvalError(f"unknown role {role!r}", field="role", hint="expert, lead or admin")
    if len(password) < MIN_PASSWORD:
        raise RubricEvalError(f"the password must have at least {MIN_PASSWORD} characters", field="password")
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    entry = f"{name}:{role}:{hash_password(password)}"
    kept = [line for line in lines if line.split(":", 1)[0].strip() != name]
    is_new = len(kept) == len(lines)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text("\n".join([*kept, entry]) + "\n", encoding="utf-8")
    os.chmod(temporary, 0o600)
    os.replace(temporary, path)
    return is_new
