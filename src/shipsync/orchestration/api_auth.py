"""The credential that the Prefect API `shipsync up` starts requires of every client, and how a client
carries it.

Prefect's own basic authentication: the server refuses any request without
`Authorization: Basic base64(PREFECT_SERVER_API_AUTH_STRING)` (401; only its health probe answers
without), and Prefect's clients send `PREFECT_API_AUTH_STRING`. The credential is generated at the
first start and kept in a file of its own (0600) in Prefect's private state folder; up gives it to
the server and the worker through their environment and never prints it. An operator's other
clients (a worker elsewhere, `prefect` commands, a CLI drawing the shared rate budget) read it from
that file: `export PREFECT_API_AUTH_STRING="$(cat .shipsync/prefect/api-auth-string)"`.
"""

from __future__ import annotations

import base64
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from shipsync.redaction import register_secret
from shipsync.safe_files import PRIVATE_FILE, create_exclusive, write_all

CREDENTIAL_FILE = "api-auth-string"
USER = "shipsync"


def api_credential(home: Path) -> str:
    """The credential kept in `home` (Prefect's state folder), created at the first call."""
    path = home / CREDENTIAL_FILE
    try:
        fd = create_exclusive(path, mode=PRIVATE_FILE)
    except FileExistsError:
        credential = path.read_text().strip()
        os.chmod(path, PRIVATE_FILE)  # a copy restored with other modes is made private again
    else:
        credential = f"{USER}:{secrets.token_urlsafe(32)}"
        try:
            write_all(fd, credential.encode())
            os.fsync(fd)
        finally:
            os.close(fd)
    register_secret(credential)
    return credential


@dataclass(frozen=True)
class PrefectApi:
    """A Prefect API and the credential it requires (None: it requires none)."""

    url: str
    auth_string: str | None = field(default=None, repr=False)

    @property
    def headers(self) -> dict[str, str]:
        if self.auth_string is None:
            return {}
        return {"Authorization": "Basic " + base64.b64encode(self.auth_string.encode()).decode()}

    def client_env(self) -> dict[str, str]:
        """What a Prefect client process needs in its environment to talk to this API."""
        env = {"PREFECT_API_URL": self.url}
        if self.auth_string is not None:
            env["PREFECT_API_AUTH_STRING"] = self.auth_string
        return env


def server_env(credential: str) -> dict[str, str]:
    """What the server's environment needs to require `credential` of every client."""
    return {"PREFECT_SERVER_API_AUTH_STRING": credential}
