"""Settings: read once from the environment (prefix SHIPSYNC_) at the entry point, then passed down."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import AliasChoices, Field, PrivateAttr, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from shipsync.api.client import ClientOptions
from shipsync.api.ratelimit import RateBudget
from shipsync.api.ratelimit import RateLimit as RateLimit  # also named from here by the lab's sandbox
from shipsync.errors import ConfigError
from shipsync.redaction import redact, register_credentials_in, register_secret

if TYPE_CHECKING:
    from shipsync.warehouse_location import LakeLocation

PRODUCTION_API_URL = "https://api.terminal49.com/v2"
DEFAULT_WAREHOUSE = "warehouse"


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
    # The lake: a folder (its SQLite catalog and data files), or ducklake:postgres:... with
    # SHIPSYNC_WAREHOUSE_DATA (see shipsync.warehouse_location).
    warehouse: str = DEFAULT_WAREHOUSE
    warehouse_data: str | None = None
    # The account's schema in the lake (several accounts share one lake); default `main`.
    account: str | None = None
    # Object storage of the lake's data files: the standard AWS variables (never written anywhere).
    aws_access_key_id: str | None = Field(default=None, validation_alias=AliasChoices("AWS_ACCESS_KEY_ID", "aws_access_key_id"))
    aws_secret_access_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("AWS_SECRET_ACCESS_KEY", "aws_secret_access_key")
    )
    aws_session_token: SecretStr | None = Field(default=None, validation_alias=AliasChoices("AWS_SESSION_TOKEN", "aws_session_token"))
    aws_region: str | None = Field(default=None, validation_alias=AliasChoices("AWS_REGION", "AWS_DEFAULT_REGION", "aws_region"))
    aws_endpoint_url: str | None = Field(
        default=None, validation_alias=AliasChoices("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "aws_endpoint_url")
    )
    # libpq's password for a PostgreSQL catalog: read by the driver itself, masked here wherever it shows.
    pgpassword: SecretStr | None = Field(default=None, validation_alias=AliasChoices("PGPASSWORD", "pgpassword"))
    # How far back time travel reaches: older snapshots are expired by the maintenance run.
    snapshot_retention_days: float = Field(default=30.0, gt=0, le=3650)
    spool: Path | None = None
    # Loaded segments kept in the spool's archive/: past either, `events load` removes the oldest.
    spool_archive_days: float = Field(default=30.0, ge=0)
    spool_archive_mb: float = Field(default=2048.0, ge=0)
    rate_limit: str = "100/60"
    connect_timeout: float = Field(default=10.0, gt=0)
    read_timeout: float = Field(default=30.0, gt=0)
    concurrency: int = Field(default=8, ge=1, le=64)
    max_retries: int = Field(default=5, ge=0, le=20)
    # A listing that runs past this many pages, or a response past this many megabytes, fails its
    # run with one line (a service that pages forever, or sends a page no one asked for).
    max_listing_pages: int = Field(default=10_000, ge=1)
    max_response_mb: float = Field(default=64.0, gt=0)
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

    # Given by the entry point, never read from the environment: see `with_rate_budget`, `with_flow_run`.
    _rate_budget: RateBudget | None = PrivateAttr(default=None)
    _flow_run_id: str | None = PrivateAttr(default=None)

    @field_validator("api_url")
    @classmethod
    def _strip_slash(cls, value: str) -> str:
        return value.rstrip("/")

    @field_validator("warehouse", "warehouse_data", mode="before")
    @classmethod
    def _path_as_text(cls, value: object) -> object:
        return str(value) if isinstance(value, Path) else value

    def model_post_init(self, __context: object) -> None:
        if self.api_key is not None:
            register_secret(self.api_key.get_secret_value())
        if self.webhook_secrets is not None:
            for secret in self.webhook_secrets.get_secret_value().split(","):
                register_secret(secret.strip())
        for credential in (self.aws_secret_access_key, self.aws_session_token, self.pgpassword):
            if credential is not None:
                register_secret(credential.get_secret_value())
        register_secret(self.aws_access_key_id)
        # A credential written in a URI or connection string (`postgresql://USER:PASSWORD@...`).
        register_credentials_in(self.api_url, self.warehouse, self.warehouse_data, self.aws_endpoint_url)

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        """What `repr` shows: every text setting with its credentials masked (a URI's password)."""
        for name, value in super().__repr_args__():
            yield name, redact(value) if isinstance(value, str) else value

    @property
    def lake(self) -> LakeLocation:
        """The warehouse these settings name (object storage credentials from the AWS variables)."""
        from shipsync.warehouse_location import ObjectStorage, lake_location

        storage = ObjectStorage(
            key_id=self.aws_access_key_id,
            secret=self.aws_secret_access_key.get_secret_value() if self.aws_secret_access_key else None,
            session_token=self.aws_session_token.get_secret_value() if self.aws_session_token else None,
            region=self.aws_region,
            endpoint_url=self.aws_endpoint_url,
        )
        return lake_location(self.warehouse, self.warehouse_data, self.account, storage)

    @property
    def rate_budget(self) -> RateBudget | None:
        return self._rate_budget

    def with_rate_budget(self, budget: RateBudget | None) -> Settings:
        """A copy of these settings whose clients draw from `budget` (not read from the environment)."""
        copy = self.model_copy()
        copy._rate_budget = budget
        return copy

    @property
    def flow_run_id(self) -> str | None:
        """The orchestrator's flow run these settings were built for (the ledger names it), if any."""
        return self._flow_run_id

    def with_flow_run(self, flow_run_id: str | None) -> Settings:
        """A copy of these settings for the flow run `flow_run_id`."""
        copy = self.model_copy()
        copy._flow_run_id = flow_run_id
        return copy

    @property
    def rate(self) -> RateLimit | None:
        return parse_rate_limit(self.rate_limit)

    def client_options(self) -> ClientOptions:
        """What the API client is made of, from these settings; a one-line ConfigError without a key."""
        return ClientOptions(
            base_url=self.api_url,
            api_key=self.require_api_key(),
            rate_limit=self.rate,
            rate_budget=self.rate_budget,
            max_retries=self.max_retries,
            retry_base_delay=self.retry_base_delay,
            concurrency=self.concurrency,
            connect_timeout=self.connect_timeout,
            read_timeout=self.read_timeout,
            max_listing_pages=self.max_listing_pages,
            max_response_bytes=int(self.max_response_mb * 1024 * 1024),
        )

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
        """Where this host's webhook receiver appends deliveries: SHIPSYNC_SPOOL, else `spool/` in
        the warehouse folder (a lake beyond one host has none: then in the state folder)."""
        if self.spool is not None:
            return self.spool
        folder = self.lake.folder
        return folder / "spool" if folder is not None else self.state_dir / "spool"


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
