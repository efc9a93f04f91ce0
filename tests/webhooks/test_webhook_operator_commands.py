"""`shipsync webhooks activate|test|ips` against the sandbox, as an operator runs them: a webhook
turned on again, one test delivery to a real receiver (signed, it is stored; unsigned, refused),
and the addresses deliveries come from."""

from __future__ import annotations

from pathlib import Path

import httpx
from typer.testing import CliRunner

from shipsync.cli import app
from shipsync.webhooks.receiver import Receiver
from shipsync.webhooks.registration import register_webhook
from shipsync.webhooks.writer import SpoolWriter
from shipsync_sandbox.serving import BackgroundServer
from support.sandboxes import K1, RunningSandbox, settings_for, shipsync_env

SECRET = "operator-test-secret-0123456789"


def test_activate_turns_a_deactivated_webhook_on_again(sandbox: RunningSandbox, tmp_path: Path) -> None:
    settings = settings_for(sandbox, tmp_path / "warehouse")
    webhook = register_webhook(settings, "http://127.0.0.1:9/hook", ["container.created"], active=False)
    done = CliRunner().invoke(app, ["webhooks", "activate", str(webhook.id)], env=shipsync_env(sandbox.api_url, tmp_path / "warehouse"))
    assert done.exit_code == 0, done.output
    assert f"webhook {webhook.id} is active" in done.output
    held = httpx.get(f"{sandbox.api_url}/webhooks/{webhook.id}", headers={"Authorization": f"Token {K1}"}).json()
    assert held["data"]["attributes"]["active"] is True


def test_a_test_delivery_reaches_the_receiver_signed_and_is_refused_unsigned(sandbox: RunningSandbox, tmp_path: Path) -> None:
    env = shipsync_env(sandbox.api_url, tmp_path / "warehouse") | {"HOOK_SECRET": SECRET, "COLUMNS": "200"}
    spool = tmp_path / "spool"
    with BackgroundServer(Receiver(SpoolWriter(spool), [SECRET])) as hooks:
        url = f"{hooks.url}/webhook"
        signed = CliRunner().invoke(
            app, ["webhooks", "test", "--url", url, "--event", "container.transport.vessel_arrived", "--secret-env", "HOOK_SECRET"], env=env
        )
        assert signed.exit_code == 0, signed.output
        assert "delivered (status 2" in signed.output and SECRET not in signed.output
        unsigned = CliRunner().invoke(app, ["webhooks", "test", "--url", url, "--event", "container.transport.vessel_arrived"], env=env)
        assert unsigned.exit_code == 1 and "failed (status 401" in unsigned.output, unsigned.output
    missing = CliRunner().invoke(app, ["webhooks", "test", "--url", url, "--event", "x", "--secret-env", "NOT_SET_ANYWHERE"], env=env)
    assert missing.exit_code != 0 and "NOT_SET_ANYWHERE is not set" in missing.output


def test_ips_lists_the_addresses_deliveries_come_from(sandbox: RunningSandbox, tmp_path: Path) -> None:
    expected = httpx.get(f"{sandbox.api_url}/webhooks/ips", headers={"Authorization": f"Token {K1}"}).json()
    done = CliRunner().invoke(app, ["webhooks", "ips"], env=shipsync_env(sandbox.api_url, tmp_path / "warehouse") | {"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    printed = done.output.splitlines()
    assert printed[: len(expected["webhook_notification_ips"])] == expected["webhook_notification_ips"]
    assert (
        f"{len(expected['webhook_notification_ips'])} address(es); the service last changed them {expected['last_updated']}" in done.output
    )
