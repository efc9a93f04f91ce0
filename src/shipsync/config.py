"""Settings: read once from the environment (prefix SHIPSYNC_) at the entry point, then passed down."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pydantic import Field, PrivateAttr, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from shipsync.errors import ConfigError
from shipsync.redaction import register_secret

if TYPE_CHECKING:
    from shipsync.api.ratelimit import RequestLimiter
    from shipsync.warehouse.publishing import PublishOptions

PRODUCTION_API_URL = "https://api.terminal49.com/v2"
DEFAULT_WAREHOUSE = Path("warehouse/shipsync.duckdb")


@dataclass(frozen=True)
class RateLimit:
    """At most `requests` requests in any rolling window of `seconds` seconds."""

    requests: int
    seconds: float

    def __str__(self) -> str:
        return f"{self.requests}/{self.seconds:g}"


class RateBudget(Protocol):
    """A rate budget shared beyond this process, injected by an entry point (the flow layer's is a
    Prefect global concurrency limit): the limiter for a key, or None when it does not apply."""

    def limiter(self, api_key: str, limit: RateLimit | None) -> RequestLimiter | None: ...


_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d+(?:\.\d+)?)\s*$")


def parse_rate_limit(text: str, *, name: str = "SHIPSYNC_RATE_LIMIT") -> RateLimit | None:
    """Parse `N/SECONDS`; `0` (or `off`) means no limit. Raises ConfigError naming `name`."""
    value = text.strip().lower()
    if value in {"0", "off", "none", ""}:
        return None
    match = _RATE.match(value)
    if not match or int(match.group(1)) < 1 or float(match.group(2)) <= 0:
        raise ConfigError(f"{name}={text!r} is not a rate: use REQUESTS/SECONDS such as 100/60, or 0 for none")
    return RateLimit(int(match.group(1)), float(match.group(2)))


class Settings(BaseSettings):
    """Everything configurable, from SHIPSYNC_* variables (or keyword arguments in tests)."""

    model_config = SettingsConfigDict(env_prefix="SHIPSYNC_", extra="ignore")

    api_url: str = PRODUCTION_API_URL
    api_key: SecretStr | None = None
    warehouse: Path = DEFAULT_WAREHOUSE
    spool: Path | None = None
    # Loaded segments kept in the spool's archive/: past either, `events load` removes the oldest.
    spool_archive_days: float = Field(default=30.0, ge=0)
    spool_archive_mb: float = Field(default=2048.0, ge=0)
    rate_limit: str = "100/60"
    connect_timeout: float = Field(default=10.0, gt=0)
    read_timeout: float = Field(default=30.0, gt=0)
    concurrency: int = Field(default=8, ge=1, le=64)
    max_retries: int = Field(default=5, ge=0, le=20)
    retry_base_delay: float = Field(default=0.25, gt=0, le=60)
    # An incremental documents pull re-reads documents created this many days before its mark:
    # the service may still change their extraction (later changes: the weekly full pass).
    document_recheck_days: float = Field(default=3.0, ge=0, le=365)
    webhook_secrets: SecretStr | None = None
    # The webhook secrets store; default: the user's configuration folder (see `secrets_file_path`).
    secrets_file: Path | None = None
    # Where `shipsync up` keeps Prefect's home and database, its logs and what it runs.
    state_dir: Path = Path(".shipsync")
    # Draw requests from a Prefect global concurrency limit shared by every worker of one key
    # ("auto": when a Prefect API is configured and a rate limit is set). The entry points (flows,
    # CLI) attach it with `with_rate_budget`; the API client never imports Prefect.
    shared_budget: str = "auto"
    # Where else each published state goes: FOLDER or FOLDER=URL, comma-separated (a shared folder,
    # or a folder an object store mounts or syncs, read back at URL), under `account`'s name.
    publish_to: str = ""
    account: str | None = None

    @field_validator("account")
    @classmethod
    def _account_name(cls, value: str | None) -> str | None:
        if value and (not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", value) or value == "accounts"):
            raise ValueError("use letters, digits, '.', '_' or '-' (and not 'accounts')")
        return value

    _rate_budget: RateBudget | None = PrivateAttr(default=None)

    @field_validator("api_url")
    @classmethod
    def _strip_slash(cls, value: str) -> str:
        return value.rstrip("/")

    def model_post_init(self, __context: object) -> None:
        if self.api_key is not None:
            register_secret(self.api_key.get_secret_value())
        if self.webhook_secrets is not None:
            for secret in self.webhook_secrets.get_secret_value().split(","):
                register_secret(secret.strip())
        from shipsync.warehouse.publishing import configure

        configure(self.warehouse, self.publish_options)

    @property
    def publish_options(self) -> PublishOptions:
        from shipsync.warehouse.publishing import PublishOptions, Target

        targets = []
        for item in (part.strip() for part in self.publish_to.split(",")):
            if item:
                folder, _, url = item.partition("=")
                targets.append(Target(Path(folder.strip()), url.strip() or None))
        return PublishOptions(account=self.account or None, targets=tuple(targets))

    @property
    def rate_budget(self) -> RateBudget | None:
        return self._rate_budget

    def with_rate_budget(self, budget: RateBudget | None) -> Settings:
        """A copy of these settings whose clients draw from `budget` (not read from the environment)."""
        copy = self.model_copy()
        copy._rate_budget = budget
        return copy

    @property
    def rate(self) -> RateLimit | None:
        return parse_rate_limit(self.rate_limit)

    def require_api_key(self) -> str:
        """The API key, or a one-line ConfigError naming the variable."""
        if self.api_key is None or not self.api_key.get_secret_value().strip():
            raise ConfigError(
                "SHIPSYNC_API_KEY is not set: export your service API key, "
                "or try `shipsync demo` to run everything against the local sandbox"
            )
        return self.api_key.get_secret_value().strip()

    @property
    def secrets_file_path(self) -> Path:
        """SHIPSYNC_SECRETS_FILE, else `shipsync/secrets.json` in the user's configuration folder."""
        return self.secrets_file if self.secrets_file is not None else user_config_dir() / "secrets.json"

    @property
    def spool_dir(self) -> Path:
        """Where the webhook receiver appends deliveries: SHIPSYNC_SPOOL, else beside the warehouse."""
        return self.spool if self.spool is not None else self.warehouse.parent / "spool"


def user_config_dir() -> Path:
    """`$XDG_CONFIG_HOME/shipsync` (`~/.config/shipsync`), or `%APPDATA%\\shipsync` on Windows."""
    if sys.platform == "win32" and os.environ.get("APPDATA"):
        return Path(os.environ["APPDATA"]) / "shipsync"
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "shipsync"


def load_settings(**overrides: object) -> Settings:
    """Build settings from the environment; a malformed value becomes a one-line ConfigError."""
    from pydantic import ValidationError as PydanticValidationError

    try:
        settings = Settings(**overrides)  # type: ignore[arg-type]
        _ = settings.rate
    except PydanticValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else "?"
        raise ConfigError(f"SHIPSYNC_{field.upper()}: {first['msg']}") from None
    return settings
