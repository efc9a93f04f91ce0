"""The webhook secrets store: in the user's configuration folder, private, written without
following links, moved out of the warehouse folder, and no empty or short secret accepted."""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from shipsync import redaction
from shipsync.cli import app
from shipsync.config import load_settings, user_config_dir
from shipsync.errors import ConfigError
from shipsync.redaction import redact
from shipsync.safe_files import UnsafePathError, write_file
from shipsync.webhooks.secrets_store import MIN_SECRET_LENGTH, forget_secret, load_secrets, save_secret, store_path
from shipsync.webhooks.server import build_receiver

SECRET = "whsec-store-test-0001"


@pytest.fixture(autouse=True)
def forget_test_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """The short secrets these tests register (even refused ones are masked) are forgotten after
    each test: "x" would otherwise be masked in every later log line of the session."""
    monkeypatch.setattr(redaction, "_secrets", redaction._secrets)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_store_is_private_and_outside_the_warehouse_folder(tmp_path: Path, secrets_file: Path) -> None:
    settings = load_settings(warehouse=tmp_path / "warehouse")
    assert store_path(settings) == secrets_file
    save_secret(settings, "w-1", SECRET)
    assert json.loads(secrets_file.read_text()) == {"w-1": SECRET}
    assert mode(secrets_file) == 0o600 and mode(secrets_file.parent) == 0o700
    assert not (tmp_path / "warehouse").exists()
    assert load_secrets(settings) == [SECRET]
    forget_secret(settings, "w-1")
    assert load_secrets(settings) == []


def test_the_default_is_the_users_configuration_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SHIPSYNC_SECRETS_FILE")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert load_settings().secrets_file_path == tmp_path / "xdg" / "shipsync" / "secrets.json" == user_config_dir() / "secrets.json"


def test_writes_never_follow_a_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "victim"
    target.write_text("untouched")
    store = tmp_path / "secrets.json"
    # A link where the temporary file will be created: the create fails instead of following it.
    monkeypatch.setattr("shipsync.safe_files.secrets.token_hex", lambda n: "fixed")
    (tmp_path / ".secrets.json.fixed.tmp").symlink_to(target)
    with pytest.raises(FileExistsError):
        write_file(store, b"{}")
    assert target.read_text() == "untouched"
    (tmp_path / ".secrets.json.fixed.tmp").unlink()
    # A link in place of the file itself is replaced, its target left alone.
    store.symlink_to(target)
    write_file(store, b'{"a": "b"}')
    assert not store.is_symlink() and store.read_text() == '{"a": "b"}' and target.read_text() == "untouched"
    assert mode(store) == 0o600


def test_a_store_in_a_folder_others_can_write_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    (shared / "secrets.json").write_text(json.dumps({"w": SECRET}))
    monkeypatch.setenv("SHIPSYNC_SECRETS_FILE", str(shared / "secrets.json"))
    with pytest.raises(UnsafePathError, match="others may write"):
        load_secrets(load_settings(warehouse=tmp_path / "w"))


@pytest.mark.parametrize("secret", ["", "x", "short-secret-15"])
def test_empty_and_short_secrets_are_refused_at_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, secret: str) -> None:
    assert len(secret) < MIN_SECRET_LENGTH
    settings = load_settings(warehouse=tmp_path / "w", spool=tmp_path / "spool")
    with pytest.raises(ConfigError, match=f"at least {MIN_SECRET_LENGTH}"):
        build_receiver(settings, secrets=[SECRET, secret])
    assert not (tmp_path / "spool").exists()  # refused before anything was created
    if secret:
        monkeypatch.setenv("SHIPSYNC_WEBHOOK_SECRETS", f"{SECRET},{secret}")
        with pytest.raises(ConfigError, match=f"at least {MIN_SECRET_LENGTH}"):
            build_receiver(load_settings(warehouse=tmp_path / "w", spool=tmp_path / "spool"))
    else:
        monkeypatch.setenv("SHIPSYNC_WEBHOOK_SECRETS", "")  # an unset variable: no secret at all
        with pytest.raises(ConfigError, match="no webhook secrets"):
            build_receiver(load_settings(warehouse=tmp_path / "w", spool=tmp_path / "spool"))


def test_the_cli_refuses_an_empty_secret_in_one_line_and_warns_about_command_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("SHIPSYNC_WAREHOUSE", str(tmp_path / "w"))
    result = CliRunner().invoke(app, ["webhooks", "serve", "--secret", "", "--spool", str(tmp_path / "spool")])
    assert result.exit_code == 1 and "at least 16" in result.output and "Traceback" not in result.output
    with caplog.at_level(logging.WARNING):
        build_receiver(load_settings(warehouse=tmp_path / "w", spool=tmp_path / "spool"), secrets=[SECRET]).writer.close()
    assert "command line" in caplog.text and SECRET not in caplog.text
    help_text = CliRunner().invoke(app, ["webhooks", "serve", "--help"], env={"COLUMNS": "200"}).output
    assert "SHIPSYNC_WEBHOOK_SECRETS" in help_text and "secrets store" in help_text


def test_short_secrets_are_redacted_too() -> None:
    load_settings(api_key="k3y")  # registers the key, however short
    assert redact("sent k3y along") == "sent *** along"


def test_the_environment_and_store_are_read_without_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHIPSYNC_WEBHOOK_SECRETS", f" {SECRET} , whsec-second-secret-02 ")
    settings = load_settings(warehouse=tmp_path / "w", spool=tmp_path / "spool")
    save_secret(settings, "w-9", "whsec-from-the-store-0003")
    receiver = build_receiver(settings)
    assert receiver.secrets == [SECRET, "whsec-second-secret-02", "whsec-from-the-store-0003"]
    receiver.writer.close()
    assert os.stat(tmp_path / "spool").st_mode & 0o777 == 0o700
