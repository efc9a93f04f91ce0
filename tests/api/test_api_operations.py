"""Every client operation against the sandbox over loopback HTTP, with typed results."""

from __future__ import annotations

import pytest

from shipsync.api.documents import ALL_INCLUDES
from shipsync.api.jsonapi import IncludedIndex
from shipsync.errors import NotFoundError, ValidationError
from support.sandboxes import K1, RunningSandbox


async def test_documents_with_every_include(sandbox: RunningSandbox) -> None:
    async with sandbox.client() as client:
        pages = [page async for page in client.documents.list_pages(page_size=7)]
        assert sum(len(p.data) for p in pages) == 30
        assert len(pages) == 5  # links.next followed until absent
        first = pages[0].data[0]
        result = await client.documents.get(first["id"], include=ALL_INCLUDES)
    doc = result.document
    assert doc.id == first["id"] and doc.type == "document"
    assert doc.self_link and doc.self_link.endswith(f"/v2/documents/{doc.id}")
    assert doc.download_link and doc.file_name and doc.file_size_bytes
    assert doc.account and doc.user and doc.email_submission and doc.last_document_representation
    assert doc.shipments and doc.cargos
    assert result.account_company_name == "Acme Imports"
    types = {r.type for r in result.included}
    assert types == {"shipment", "container", "account", "user", "document_representation", "email_submission"}
    for ref in [*doc.shipments, *doc.cargos, doc.user, doc.email_submission, doc.last_document_representation]:
        assert result.related(ref) is not None
    container = result.related(doc.cargos[0])
    assert container is not None and len(container.attributes["number"]) == 11


async def test_current_extraction_alias_and_bad_include(sandbox: RunningSandbox) -> None:
    async with sandbox.client() as client:
        doc_id = next(iter(sandbox.state.world.accounts[K1].documents))
        page = await client.documents.get_page(doc_id, include=["current_extraction"])
        assert {r["type"] for r in page.included} == {"document_representation"}
        index = IncludedIndex.of(page.included)
        assert index.resolve(page.data[0]["relationships"]["last_document_representation"]) is not None
        with pytest.raises(ValueError, match="unknown include"):
            await client.documents.get(doc_id, include=["bogus"])


async def test_metro_area_by_locode_and_by_id(sandbox: RunningSandbox) -> None:
    async with sandbox.client() as client:
        by_code = await client.metro_areas.get("USSAV")
        by_id = await client.metro_areas.get(by_code.id)
        assert by_code == by_id
        assert (by_code.name, by_code.state_abbr, by_code.country_code, by_code.time_zone) == (
            "Savannah",
            "GA",
            "US",
            "America/New_York",
        )
        assert by_code.latitude and by_code.longitude
        assert by_code.unnamed_member is not None  # the spec's extra empty-name member
        with pytest.raises(NotFoundError):
            await client.metro_areas.get("ZZZZZ")


async def test_document_schema_versions(sandbox: RunningSandbox) -> None:
    async with sandbox.client() as client:
        current = await client.document_schemas.get("commercial_invoice@2026-03-23")
        old = await client.document_schemas.get("commercial_invoice@2025-11-04")
        draft = await client.document_schemas.get("commercial_invoice@2026-09-01")
        assert (current.current, current.draft) == (True, False)
        assert (old.current, old.draft) == (False, False)
        assert draft.draft is True and draft.active_at is None
        assert current.schema_format == "json_schema" and current.schema_payload
        assert current.schema_payload["type"] == "object"
        with pytest.raises(NotFoundError) as caught:
            await client.document_schemas.get("commercial_invoice@1999-01-01")
    error = caught.value.errors[0]
    assert (error.status, error.title) == ("404", "Not Found")
    assert error.detail == "Couldn't find DocumentSchema with 'id'=commercial_invoice@1999-01-01"


async def test_tracking_requests_list_filter_and_patch(sandbox: RunningSandbox) -> None:
    async with sandbox.client() as client:
        everything = await client.tracking_requests.list()
        assert {tr.status for tr in everything} >= {"pending", "created", "failed"}
        assert any(tr.failed_reason for tr in everything) and any(tr.is_retrying and tr.retry_count for tr in everything)
        # The answers carry the shipment's tags as `tags`, as the reference shapes a tracking request.
        assert any(tr.tags == ["seeded"] for tr in everything)
        assert all("tags" in tr.raw["attributes"] for tr in everything)
        target = next(tr for tr in everything if tr.tracked_object is not None)  # pending and failed ones track none
        found = await client.tracking_requests.list(request_number=target.request_number)
        assert [tr.id for tr in found] == [target.id]
        updated = await client.tracking_requests.update(target.id, ref_number="REQ-9")
        # The answer carries no `ref_number`: the number shows in the request's `ref_numbers`.
        assert updated.ref_numbers and "REQ-9" in updated.ref_numbers and "ref_number" not in updated.raw["attributes"]
        assert updated.updated_at and target.updated_at and updated.updated_at > target.updated_at
        since = await client.tracking_requests.list(updated_since=updated.updated_at.strftime("%Y-%m-%dT%H:%M:%SZ"))
        assert [tr.id for tr in since] == [target.id]
        # PATCH /tracking_requests takes only ref_number (the reference); the rest is refused with its pointer.
        for name, value in (("tags", ["x"]), ("ref_numbers", ["PO"]), ("scac", "MAEU"), ("request_number", "X"), ("status", "x")):
            body = {"data": {"type": "tracking_request", "attributes": {name: value}}}
            with pytest.raises(ValidationError) as caught:
                await client.transport.write("PATCH", f"tracking_requests/{target.id}", body)
            assert caught.value.errors[0].pointer == f"/data/attributes/{name}"
        with pytest.raises(NotFoundError):
            await client.tracking_requests.update("missing", ref_number="x")
        # Tags and reference numbers change on the tracked shipment, and the request shows them.
        assert target.tracked_object is not None
        shipment = await client.shipments.update(target.tracked_object.id, tags=["hot", "hot", "cold"], ref_numbers=["PO-1"])
        assert shipment.tags == ["hot", "cold"] and shipment.ref_numbers == [
            "PO-1"
        ]  # sent once each: the reference's tags are unique items
        with pytest.raises(ValidationError):  # and the service refuses them twice
            twice = {"data": {"type": "shipment", "attributes": {"tags": ["hot", "hot"]}}}
            await client.transport.write("PATCH", f"shipments/{shipment.id}", twice)
        again = await client.tracking_requests.get(target.id)
        assert again.tags == ["hot", "cold"] and again.ref_numbers == ["PO-1"]
        with pytest.raises(ValidationError) as refused:
            await client.transport.write("PATCH", f"shipments/{shipment.id}", {"data": {"type": "shipment", "attributes": {"tags": "x"}}})
        assert refused.value.errors[0].pointer == "/data/attributes/tags"


async def test_definitions_options_and_custom_fields(sandbox: RunningSandbox) -> None:
    async with sandbox.client() as client:
        templates = await client.custom_field_definitions.list()
        assert {d.data_type for d in templates} == {
            "short_text",
            "number",
            "date",
            "datetime",
            "boolean",
            "enum",
            "enum_multi",
            "reference",
        }
        created = await client.custom_field_definitions.create(
            entity_type="Container",
            api_slug="broker_code",
            display_name="Broker code",
            data_type="enum",
            description="Which broker",
            validation={"required": True},
        )
        assert created.api_slug == "broker_code" and created.validation == {"required": True}
        option = await client.custom_field_definitions.create_option(created.id, label="Acme", value="acme")
        assert (option.label, option.value) == ("Acme", "acme")
        assert [o.value for o in await client.custom_field_definitions.options(created.id)] == ["acme"]
        with pytest.raises(ValidationError) as dup:
            await client.custom_field_definitions.create(
                entity_type="Container", api_slug="broker_code", display_name="x", data_type="short_text"
            )
        assert dup.value.errors[0].pointer == "/data/attributes/api_slug"

        container_id = next(iter(sandbox.state.world.accounts[K1].documents.values()))["relationships"]["cargos"]["data"][0]["id"]
        value = await client.custom_fields.create(entity_type="container", entity_id=container_id, api_slug="broker_code", value="acme")
        assert value.api_slug == "broker_code" and value.value == "acme" and value.display_value == "acme"
        assert value.entity is not None and value.entity.id == container_id
        assert value.definition is not None and value.definition.id == created.id
        listed = await client.custom_fields.list(entity_id=container_id)
        assert [cf.id for cf in listed] == [value.id]
        with pytest.raises(ValidationError) as again:
            await client.custom_fields.create(entity_type="container", entity_id=container_id, api_slug="broker_code", value="acme")
        assert again.value.errors[0].pointer == "/data/attributes/api_slug"
        patched = await client.custom_fields.update(value.id, "acme")
        assert patched.value == "acme"
        await client.custom_fields.delete(value.id)
        assert await client.custom_fields.list(entity_id=container_id) == []


@pytest.mark.parametrize(
    ("slug", "value", "reason"),
    [
        ("priority", "rush", "not an option"),
        ("handling_flags", ["fragile", "wet"], "not options"),
        ("declared_value", "lots", "not a number"),
        ("customs_cleared_on", "31/31/2026", "not a date"),
        ("delivery_appointment_at", "tomorrow", "not a date-time"),
        ("hazardous", "maybe", "true or false"),
        ("po_number", "PO-" + "9" * 30, "too long"),
        ("po_number", "po 1", "pattern"),
    ],
)
async def test_value_validation_422(sandbox: RunningSandbox, slug: str, value: object, reason: str) -> None:
    container_id = next(iter(sandbox.state.world.accounts[K1].documents.values()))["relationships"]["cargos"]["data"][0]["id"]
    async with sandbox.client() as client:
        with pytest.raises(ValidationError) as caught:
            await client.custom_fields.create(entity_type="container", entity_id=container_id, api_slug=slug, value=value)
    assert caught.value.status == 422
    assert caught.value.errors[0].pointer == "/data/attributes/value"
    assert reason in (caught.value.errors[0].detail or "")


async def test_webhooks_create_and_delete(sandbox: RunningSandbox) -> None:
    async with sandbox.client() as client:
        webhook = await client.webhooks.create(
            "https://example.test/hook",
            ["container.transport.vessel_arrived", "tracking_request.failed"],
            headers=[("X-Team", "ops")],
        )
        assert webhook.secret and len(webhook.secret) >= 32
        assert webhook.active is True and webhook.headers[0].name == "X-Team"
        assert webhook.secret not in repr(webhook) and "secret" not in webhook.model_dump()
        await client.webhooks.delete(webhook.id)
        with pytest.raises(NotFoundError):
            await client.webhooks.delete(webhook.id)
        # The service judges the kinds (registration checks them first: test_webhook_registration).
        with pytest.raises(ValidationError) as caught:
            await client.webhooks.create("https://example.test/h", ["nope"])
        assert caught.value.errors[0].pointer == "/data/attributes/events"
