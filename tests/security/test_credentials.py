"""One redaction for every credential form (issue 36, item 2), in the fast tier: each form a
credential is written in is masked by `redaction.redact` and nothing around it; the lake's
`describe()` and the statements printed for analysts carry none of them; a credential written in
a setting is masked wherever it shows, bare too (a driver quoting it); a traceback nobody caught
is printed masked. The same canaries through every command, Prefect and `up`:
`tests/flows/test_reliability.py::test_credential_canaries_in_every_form`."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from shipsync import redaction
from shipsync.config import load_settings
from shipsync.redaction import MASK, credentials_in, install_log_redaction, mask_credentials, redact
from shipsync.warehouse.analyst import attach_script
from shipsync.warehouse_location import ObjectStorage, lake_location
from support.waiting import HANG_S

# Each form a credential is written in, with a canary of its own (the `{}`).
FORMS = {
    "postgresql URI": "ducklake:postgres:postgresql://shipsync:{}@db.internal:5432/lake",
    "postgres URI, an @ in the password": "postgres://shipsync:p@ss-{}@db.internal/lake",
    "s3 URI with keys": "s3://AKIAIOSFODNN7EXAMPLE:{}/with+slash@bucket/prefix/",
    "https URI": "https://user:{}@api.example.com/v2",
    "libpq keyword": "ducklake:postgres:dbname=lake host=db.internal user=shipsync password={} port=5432",
    "libpq keyword, quoted with a space": "dbname=lake password='two {} words' host=db",
    "query password": "https://api.example.com/v2/documents?page=2&password={}",
    "query token": "https://api.example.com/v2/documents?token={}&page=2",
    "query api_key": "https://api.example.com/v2?api_key={}",
    "query pass": "http://host/x?pass={}",
    "PGPASSWORD": "export PGPASSWORD={}",
    "AWS_SECRET_ACCESS_KEY": "AWS_SECRET_ACCESS_KEY={} AWS_REGION=us-east-1",
    "AWS_SESSION_TOKEN": "AWS_SESSION_TOKEN={}",
    "presigned URL": "https://bucket.s3.amazonaws.com/k?X-Amz-Signature=0ff1ce&X-Amz-Security-Token={}",
    "DuckDB secret": "CREATE SECRET s (TYPE s3, KEY_ID 'AKIAIOSFODNN7EXAMPLE', SECRET '{}', REGION 'us-east-1')",
    "DuckDB session token": "CREATE SECRET s (TYPE s3, SESSION_TOKEN '{}')",
    "JSON member": '{{"webhook_secret": "{}", "url": "https://example.com"}}',
    "Python repr": "{{'password': '{}'}}",
    "Authorization header": "Authorization: Token {}",
    "bearer header": "authorization: Bearer {}",
}


@pytest.fixture(autouse=True)
def forget_test_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """The canaries these tests register are forgotten after each test."""
    monkeypatch.setattr(redaction, "_secrets", redaction._secrets)


@pytest.mark.parametrize("form", FORMS)
def test_every_credential_form_is_masked_and_nothing_else(form: str) -> None:
    canary = f"canary-{abs(hash(form)) % 10**8:08d}"
    text = FORMS[form].format(canary)
    masked = redact(text)
    assert canary not in masked and MASK in masked, masked
    assert canary in " ".join(credentials_in(text)), credentials_in(text)
    # What is not a credential stays: the text around the mask reads as before.
    head, _, tail = text.partition(canary)
    assert masked.startswith(head[:4]) and masked.endswith(tail[-6:] if len(tail) > 6 else ""), masked


def test_an_aws_access_key_id_is_masked_anywhere() -> None:
    assert redact("the key AKIAIOSFODNN7EXAMPLE was refused") == "the key *** was refused"
    assert redact("s3://AKIAIOSFODNN7EXAMPLE:x@bucket/") == "s3://***:***@bucket/"


@pytest.mark.parametrize(
    "text",
    [
        "Prefect UI http://127.0.0.1:4200/api (database SQLite /home/op/.shipsync/prefect/prefect.db)",
        "SHIPSYNC_API_KEY: Input should be a valid string",
        "the webhook secret: not set; the token bucket holds 20 of 100",
        "delivery event=container.updated id=ntf-123 -> 200 stored (1.2 ms)",
        "bypass=1 compass=north keystone=3 signature_count=4",
        "https://medium.com:443/@user mail op@example.com",
        "ducklake:postgres:dbname=lake host=db.internal user=shipsync (data s3://bucket/lake/, schema main)",
    ],
)
def test_text_without_a_credential_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_no_lake_location_describes_a_credential(tmp_path: Path) -> None:
    canaries = {"uri": "canary-uri-4d1c", "keyword": "canary-kw-77a2", "s3": "canary-s3-9e0f", "secret": "canary-aws-31b7"}
    storage = ObjectStorage("AKIAIOSFODNN7EXAMPLE", canaries["secret"], "canary-session-5a5a", "us-east-1", "http://127.0.0.1:9000")
    locations = [
        lake_location(f"ducklake:postgres:postgresql://shipsync:{canaries['uri']}@db/lake", str(tmp_path / "data")),
        lake_location(f"ducklake:postgres:dbname=lake user=shipsync password={canaries['keyword']}", f"s3://bucket/{tmp_path.name}/"),
        lake_location("ducklake:postgres:dbname=lake", f"s3://AKIAIOSFODNN7EXAMPLE:{canaries['s3']}@bucket/lake/", storage=storage),
        lake_location(str(tmp_path / "warehouse")),
    ]
    printed = "\n".join(text for location in locations for text in (location.describe(), attach_script(location), repr(location)))
    assert "AKIAIOSFODNN7EXAMPLE" not in printed and "canary-" not in printed, printed
    assert "postgresql://shipsync:***@db/lake" in printed and "password=***" in printed and "s3://***:***@bucket/lake/" in printed


def test_a_credential_in_a_setting_is_masked_bare_too(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A driver may quote the bare password (`password authentication failed for "x"`): a
    credential written in a setting is registered as a secret when the settings are read."""
    os.environ.pop("PGPASSWORD", None)
    settings = load_settings(
        warehouse="ducklake:postgres:postgresql://shipsync:canary-pg-8c4e@db/lake",
        warehouse_data=str(tmp_path / "data"),
        api_url="https://user:canary-url-2b9d@api.example.com/v2",
        pgpassword="canary-pgenv-0a61",
        aws_access_key_id="AKIAIOSFODNN7EXAMPLE",
        aws_secret_access_key="canary-aws-secret-6f2e",
        aws_session_token="canary-aws-session-1d3c",
    )
    install_log_redaction()  # as every entry point does (`logsetup`)
    caplog.set_level(logging.INFO)
    canaries = ["canary-pg-8c4e", "canary-url-2b9d", "canary-pgenv-0a61", "canary-aws-secret-6f2e", "canary-aws-session-1d3c"]
    logging.getLogger("shipsync.test").info("bare: %s; %s", " ".join(canaries), "AKIAIOSFODNN7EXAMPLE")
    assert caplog.records and "bare: ***" in caplog.text
    assert not any(canary in caplog.text for canary in [*canaries, "AKIAIOSFODNN7EXAMPLE"]), caplog.text
    assert "canary" not in settings.lake.describe() + repr(settings)


def test_a_traceback_nobody_caught_is_printed_masked(tmp_path: Path) -> None:
    """A driver's error may quote a connection string whole; an entry point's uncaught traceback
    (the process's or a thread's) goes through the redaction too."""
    script = textwrap.dedent(
        """
        import threading
        from shipsync.logsetup import setup_logging
        setup_logging()
        def fail():
            raise RuntimeError('Unable to connect to Postgres at "postgresql://u:canary-thread-5e1a@db/lake"')
        worker = threading.Thread(target=fail)
        worker.start()
        worker.join()
        raise RuntimeError("IO Error: cannot attach ducklake:postgres:dbname=x password=canary-main-9b0c")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG_S, check=False)
    assert done.returncode == 1 and "RuntimeError" in done.stderr and "postgresql://u:***@db/lake" in done.stderr, done.stderr
    assert "canary" not in done.stderr + done.stdout, done.stderr


def test_mask_credentials_is_idempotent() -> None:
    once = mask_credentials(" ".join(FORMS.values()).replace("{}", "canary"))
    assert mask_credentials(once) == once
