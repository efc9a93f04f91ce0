"""A warehouse filled the way a user fills it, for the report's tests: a sandbox pulled whole, and
signed webhook deliveries of simulated journeys received over HTTP, spooled and loaded; plus one
conflicting redelivery and one quarantined body, so every delivery-health series has data."""

from __future__ import annotations

from pathlib import Path

import orjson

from shipsync.config import Settings, load_settings
from shipsync.pull.everything import pull_all
from shipsync.webhooks.load import load_events
from shipsync.webhooks.receiver import Receiver
from shipsync.webhooks.registration import register_webhook
from shipsync.webhooks.signature import sign
from shipsync.webhooks.writer import SpoolWriter
from shipsync_sandbox import SandboxOptions, create_app
from shipsync_sandbox.admin_client import wait_for_deliveries
from shipsync_sandbox.serving import BackgroundServer
from support.http import HTTP
from support.lake import analyst
from support.sandboxes import K1
from support.waiting import HANG_S

ADMIN = {"Authorization": f"Token {K1}"}


def _post(url: str, secret: str, body: bytes) -> int:
    headers = {"Content-Type": "application/json", "X-T49-Webhook-Signature": sign(secret, body)}
    return HTTP.post(f"{url}/webhook", content=body, headers=headers, timeout=10).status_code


def build_fleet(root: Path, *, documents: int = 30, containers: int = 8) -> Settings:
    """Pull a sandbox into the lake `root/warehouse` and load `containers` journeys of deliveries."""
    sandbox = create_app(SandboxOptions(api_keys=(K1,), documents=documents, rate_limit=None, delivery_retry_base_s=0.05))
    root.mkdir(mode=0o700, parents=True, exist_ok=True)  # the receiver makes the spool only, not its folder
    writer = SpoolWriter(root / "spool")
    receiver = Receiver(writer, [])
    with BackgroundServer(sandbox) as service, BackgroundServer(receiver) as hooks:
        settings = load_settings(
            api_url=f"{service.url}/v2", api_key=K1, rate_limit="0", warehouse=root / "warehouse", spool=root / "spool"
        )
        webhook = register_webhook(settings, f"{hooks.url}/webhook", [], all_events=True)
        assert webhook.secret
        receiver.secrets.append(webhook.secret)
        pull_all(settings)
        HTTP.post(f"{service.url}/_admin/simulate", params={"containers": containers}, headers=ADMIN, timeout=120).raise_for_status()
        assert wait_for_deliveries(service.url, K1, timeout_s=HANG_S)["pending"] == 0, "the sandbox did not deliver in time"
        load_events(settings.lake, settings.spool_dir)
        # A redelivery under a known id with another body (a conflict), and a signed body that is
        # not a notification at all (quarantined by the receiver).
        con = analyst(settings.warehouse)
        known = con.execute("SELECT CAST(payload AS VARCHAR) FROM webhook_events LIMIT 1").fetchone()
        con.close()
        assert known is not None
        changed = orjson.loads(known[0])
        changed["data"]["attributes"]["delivery_status"] = "succeeded-again"
        assert _post(hooks.url, webhook.secret, orjson.dumps(changed)) == 200
        assert _post(hooks.url, webhook.secret, b'{"not": "a notification"}') == 400
    writer.close()
    load_events(settings.lake, settings.spool_dir)
    return settings
