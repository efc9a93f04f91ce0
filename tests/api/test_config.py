"""Settings: defaults, the missing-key message, secrets out of reprs."""

from __future__ import annotations

import pytest

from shipsync.config import PRODUCTION_API_URL, load_settings
from shipsync.errors import ConfigError


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SHIPSYNC_API_URL", "SHIPSYNC_API_KEY", "SHIPSYNC_WAREHOUSE", "SHIPSYNC_RATE_LIMIT"):
        monkeypatch.delenv(name, raising=False)
    settings = load_settings()
    assert settings.api_url == PRODUCTION_API_URL
    assert settings.warehouse == "warehouse" and settings.lake.data_path.endswith("/warehouse/data/")
    assert settings.rate is not None and (settings.rate.requests, settings.rate.seconds) == (100, 60)
    with pytest.raises(ConfigError) as caught:
        settings.require_api_key()
    assert "SHIPSYNC_API_KEY" in str(caught.value) and "shipsync demo" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_environment_and_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHIPSYNC_API_KEY", "canary-key-0001")
    monkeypatch.setenv("SHIPSYNC_RATE_LIMIT", "0")
    settings = load_settings()
    assert settings.require_api_key() == "canary-key-0001"
    assert settings.rate is None
    assert "canary-key-0001" not in repr(settings) and "canary-key-0001" not in str(settings.model_dump())


def test_bad_values_are_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHIPSYNC_RATE_LIMIT", "lots")
    with pytest.raises(ConfigError, match="SHIPSYNC_RATE_LIMIT"):
        load_settings()
    monkeypatch.setenv("SHIPSYNC_RATE_LIMIT", "10/1")
    monkeypatch.setenv("SHIPSYNC_CONCURRENCY", "zero")
    with pytest.raises(ConfigError, match="SHIPSYNC_CONCURRENCY"):
        load_settings()
