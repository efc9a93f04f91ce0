"""What coordinators need, served as the service does (issue 28, item 5; api-facts: "Starting and
stopping tracking; catching up deliveries"): creating tracking requests (with carrier detection that
settles a while later, duplicates refused, staged reference numbers, tags and custom field values),
guessing what a number is, stopping and resuming a shipment's tracking, and listing the account's
webhook notifications, those whose delivery failed too."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from shipsync_sandbox import SandboxApp, SandboxOptions, create_app
from shipsync_sandbox.container_numbers import check_digit
from shipsync_sandbox.event_kinds import EVENT_KINDS
from support.sandboxes import K1

SETTLES_IN = 0.05


class Service:
    """The sandbox over HTTP in process, its webhook's deliveries answered by `receive`."""

    def __init__(self, app: SandboxApp, client: httpx.AsyncClient, delivered: list[dict[str, Any]]) -> None:
        self.app, self.client, self.delivered = app, client, delivered

    @property
    def account(self) -> Any:
        return self.app.state.world.accounts[K1]

    async def create(self, **attributes: Any) -> httpx.Response:
        relationships = attributes.pop("relationships", None)
        data: dict[str, Any] = {"type": "tracking_request", "attributes": attributes}
        if relationships:
            data["relationships"] = relationships
        return await self.client.post("/tracking_requests", json={"data": data})

    async def get(self, path: str, **params: Any) -> Any:
        response = await self.client.get(path, params=params)
        assert response.status_code == 200, response.text
        return response.json()

    async def settled(self) -> None:
        await asyncio.sleep(SETTLES_IN * 4)
        while self.app.deliverer.pending:
            await asyncio.sleep(0.01)

    def kinds(self) -> list[str]:
        return [d["data"]["attributes"]["event"] for d in self.delivered]


def run(test: Callable[[Service], Awaitable[None]], refuse: Callable[[dict[str, Any]], bool] = lambda body: False, **options: Any) -> None:
    app = create_app(SandboxOptions(api_keys=(K1,), documents=30, tracking_delay_s=SETTLES_IN, delivery_retry_base_s=0.0, **options))
    delivered: list[dict[str, Any]] = []

    async def receiver(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if refuse(body):
            return httpx.Response(500)
        delivered.append(body)
        return httpx.Response(200)

    async def main() -> None:
        app.deliverer._client = httpx.AsyncClient(transport=httpx.MockTransport(receiver))
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
        headers = {"Authorization": f"Token {K1}"}
        async with httpx.AsyncClient(transport=transport, base_url="http://sandbox.test/v2", headers=headers) as client:
            hook = {"data": {"type": "webhook", "attributes": {"url": "https://hooks.test/w", "events": list(EVENT_KINDS), "active": True}}}
            assert (await client.post("/webhooks", json=hook)).status_code == 201
            await test(Service(app, client, delivered))

    asyncio.run(main())


def error_of(response: httpx.Response) -> tuple[int, str | None, str | None, str | None]:
    error = response.json()["errors"][0]
    return response.status_code, (error.get("source") or {}).get("pointer"), error.get("code"), error.get("detail")


def container_number(owner: str, serial: str = "123456") -> str:
    return f"{owner}{serial}{check_digit(owner + serial)}"


def test_a_tracking_request_is_pending_then_created_with_what_it_staged() -> None:
    async def test(service: Service) -> None:
        customer = next(iter(service.account.parties))
        made = await service.create(
            request_type="bill_of_lading",
            request_number="MAEU987654321",
            scac="MAEU",
            ref_numbers=["PO-77", "PO-78"],
            shipment_tags=["camembert"],
            initial_custom_fields={
                "shipment": [{"api_slug": "consignee", "value": "Globex"}],
                "containers": [{"api_slug": "po_number", "value": "PO-1"}, {"api_slug": "priority", "value": "high", "number": ""}],
            },
            relationships={"customer": {"data": {"type": "party", "id": customer}}},
        )
        assert made.status_code == 201, made.text
        request = made.json()["data"]
        assert (request["attributes"]["status"], request["attributes"]["scac"]) == ("pending", "MAEU")
        assert request["relationships"]["tracked_object"]["data"] is None
        assert request["relationships"]["customer"]["data"] == {"type": "party", "id": customer}
        assert request["attributes"]["ref_numbers"] == ["PO-77", "PO-78"] and request["attributes"]["tags"] == ["camembert"]
        await service.settled()
        settled = (await service.get(f"/tracking_requests/{request['id']}"))["data"]
        assert settled["attributes"]["status"] == "created"
        shipment_id = settled["relationships"]["tracked_object"]["data"]["id"]
        shipment = (await service.get(f"/shipments/{shipment_id}"))["data"]
        assert shipment["attributes"]["bill_of_lading_number"] == "MAEU987654321"
        assert shipment["attributes"]["ref_numbers"] == ["PO-77", "PO-78"] and shipment["attributes"]["tags"] == ["camembert"]
        assert shipment["attributes"]["pol_atd_at"] is not None and shipment["attributes"]["pod_ata_at"] is None  # on its way now
        values = {
            (cf["relationships"]["entity"]["data"]["type"], cf["attributes"]["api_slug"]): cf["attributes"]["value"]
            for cf in service.account.custom_fields.values()
        }
        boxes = len(shipment["relationships"]["containers"]["data"])
        assert values == {("shipment", "consignee"): "Globex", ("container", "po_number"): "PO-1", ("container", "priority"): "high"}
        assert sum(1 for cf in service.account.custom_fields.values() if cf["attributes"]["api_slug"] == "priority") == boxes
        assert service.kinds() == ["tracking_request.succeeded"]
        assert service.delivered[0]["included"][1]["id"] == shipment_id  # the request, then its shipment
        # The number is tracked now: asking again is refused as the service refuses it.
        again = await service.create(request_type="bill_of_lading", request_number="maeu987654321", scac="MAEU")
        assert error_of(again)[:3] == (422, "/data/attributes/request_number", "duplicate")

    run(test)


def test_carrier_detection_settles_as_created_or_failed() -> None:
    async def test(service: Service) -> None:
        detected = await service.create(request_type="bill_of_lading", request_number="HLCU123456789", auto_detect_vocc_scac=True)
        unknown = await service.create(request_type="booking_number", request_number="123456789", auto_detect_vocc_scac=True)
        assert detected.status_code == unknown.status_code == 201
        assert detected.json()["data"]["attributes"]["scac"] is None and detected.json()["data"]["attributes"]["status"] == "pending"
        await service.settled()
        found = (await service.get(f"/tracking_requests/{detected.json()['data']['id']}"))["data"]["attributes"]
        failed = (await service.get(f"/tracking_requests/{unknown.json()['data']['id']}"))["data"]["attributes"]
        assert (found["status"], found["scac"]) == ("created", "HLCU")
        assert (failed["status"], failed["failed_reason"], failed["scac"]) == ("failed", "scac_auto_detect_failed", None)
        assert sorted(service.kinds()) == ["tracking_request.failed", "tracking_request.succeeded"]
        # Listed newest first; the pending and failed ones by their status.
        listed = await service.get("/tracking_requests", **{"filter[status]": "failed"})
        assert unknown.json()["data"]["id"] in [r["id"] for r in listed["data"]]

    run(test)


def test_creates_are_refused_with_the_services_pointers() -> None:
    async def test(service: Service) -> None:
        seeded = next(iter(service.account.tracking_requests.values()))["attributes"]
        before = len(service.account.tracking_requests)
        cases: list[tuple[dict[str, Any], str, str | None]] = [
            ({"request_number": "MAEU1234567"}, "/data/attributes/request_type", None),
            ({"request_type": "parcel", "request_number": "MAEU1234567", "scac": "MAEU"}, "/data/attributes/request_type", None),
            ({"request_type": "bill_of_lading", "request_number": " ", "scac": "MAEU"}, "/data/attributes/request_number", None),
            ({"request_type": "bill_of_lading", "request_number": "MAEU1234567"}, "/data/attributes/scac", None),
            ({"request_type": "bill_of_lading", "request_number": "MAEU1234567", "scac": "XXXX"}, "/data/attributes/scac", None),
            ({"request_type": "container", "request_number": container_number("COSU"), "scac": "COSU"}, "/data/attributes/scac", None),
            (
                {"request_type": "bill_of_lading", "request_number": "MAEU1234567", "scac": "MAEU", "ref_numbers": "PO-1"},
                "/data/attributes/ref_numbers",
                None,
            ),
            (
                {
                    "request_type": "bill_of_lading",
                    "request_number": "MAEU1234567",
                    "scac": "MAEU",
                    "initial_custom_fields": {"shipment": [{"api_slug": "po_number", "value": "PO-1"}]},
                },
                "/data/attributes/initial_custom_fields/shipment/0/api_slug",
                None,
            ),
            (
                {
                    "request_type": "bill_of_lading",
                    "request_number": "MAEU1234567",
                    "scac": "MAEU",
                    "initial_custom_fields": {"containers": [{"api_slug": "priority", "value": "rush"}]},
                },
                "/data/attributes/initial_custom_fields/containers/0/value",
                None,
            ),
            (
                {"request_type": "bill_of_lading", "request_number": seeded["request_number"], "scac": seeded["scac"]},
                "/data/attributes/request_number",
                "duplicate",
            ),
        ]
        for attributes, pointer, code in cases:
            refused = await service.create(**attributes)
            assert error_of(refused)[:3] == (422, pointer, code), (attributes, refused.text)
        details = [error_of(await service.create(**case[0]))[3] for case in cases[3:6]]
        assert details[0] == "Scac can't be blank" and "is not recognized" in str(details[1]) and "is not supported" in str(details[2])
        assert len(service.account.tracking_requests) == before  # none was made

    run(test)


def test_a_number_the_account_already_tracks_without_a_request_fails_as_a_duplicate() -> None:
    async def test(service: Service) -> None:
        requests = service.account.tracking_requests.values()
        requested = {
            tr["relationships"]["tracked_object"]["data"]["id"] for tr in requests if tr["relationships"]["tracked_object"]["data"]
        }
        shipment = next(s for s in service.account.of_type("shipment") if s["id"] not in requested)
        bill, scac = shipment["attributes"]["bill_of_lading_number"], shipment["attributes"]["shipping_line_scac"]
        made = await service.create(request_type="bill_of_lading", request_number=bill, scac=scac)
        bad_box = await service.create(request_type="container", request_number="MSCU1234560", scac="MSCU")
        assert made.status_code == bad_box.status_code == 201
        await service.settled()
        first = (await service.get(f"/tracking_requests/{made.json()['data']['id']}"))["data"]["attributes"]
        second = (await service.get(f"/tracking_requests/{bad_box.json()['data']['id']}"))["data"]["attributes"]
        assert (first["status"], first["failed_reason"]) == ("failed", "duplicate")
        assert (second["status"], second["failed_reason"]) == ("failed", "not_found")  # a wrong check digit

    run(test)


def test_infer_number_guesses_the_type_and_the_carrier() -> None:
    async def test(service: Service) -> None:
        async def infer(number: str) -> httpx.Response:
            return await service.client.post("/tracking_requests/infer_number", json={"number": number})

        box = (await infer(container_number("MSCU"))).json()["data"]["attributes"]
        assert box["number_type"] == "container" and box["validation"]["check_digit_passed"] is True
        assert (box["shipping_line"]["decision"], box["shipping_line"]["selected"]["scac"]) == ("auto_select", "MSCU")
        bill = (await infer("CMDU123456789")).json()["data"]
        assert bill["type"] == "infer_number_results" and bill["attributes"]["shipping_line"]["selected"]["scac"] == "CMDU"
        booking = (await infer("123456789")).json()["data"]["attributes"]
        assert booking["number_type"] == "booking" and booking["shipping_line"]["decision"] == "needs_confirmation"
        assert booking["shipping_line"]["selected"] is None and len(booking["shipping_line"]["candidates"]) > 1
        assert (await infer("?!")).status_code == 422

    run(test)


def test_stopping_and_resuming_a_shipments_tracking() -> None:
    async def test(service: Service) -> None:
        account = service.account
        requests = [tr for tr in account.tracking_requests.values() if tr["relationships"]["tracked_object"]["data"]]
        tracked = {tr["relationships"]["tracked_object"]["data"]["id"]: tr for tr in requests}
        going = [s["id"] for s in (await service.get("/shipments", **{"filter[tracking_stopped]": "false", "page[size]": 100}))["data"]]
        shipment_id = next(i for i in going if i in tracked)
        stopped = await service.client.patch(f"/shipments/{shipment_id}/stop_tracking")
        assert stopped.status_code == 200
        attributes = stopped.json()["data"]["attributes"]
        assert attributes["line_tracking_stopped_at"] and attributes["line_tracking_stopped_reason"] == "cancelled_by_user"
        request = (await service.get(f"/tracking_requests/{tracked[shipment_id]['id']}"))["data"]["attributes"]
        assert request["status"] == "tracking_stopped"  # its shipment's tracking stopped
        listed = await service.get("/shipments", **{"filter[tracking_stopped]": "true", "page[size]": 100})
        assert shipment_id in [s["id"] for s in listed["data"]]
        await service.settled()
        assert service.kinds() == ["tracking_request.tracking_stopped"]
        resumed = await service.client.patch(f"/shipments/{shipment_id}/resume_tracking")
        assert resumed.status_code == 200 and resumed.json()["data"]["attributes"]["line_tracking_stopped_at"] is None
        request = (await service.get(f"/tracking_requests/{tracked[shipment_id]['id']}"))["data"]["attributes"]
        assert request["status"] == "created"
        listed = await service.get("/shipments", **{"filter[tracking_stopped]": "false", "page[size]": 100})
        assert shipment_id in [s["id"] for s in listed["data"]]
        assert (await service.client.patch("/shipments/no-such-shipment/stop_tracking")).status_code == 404

    run(test)


def test_the_notifications_listing_holds_every_notification_with_how_its_delivery_went() -> None:
    refused: set[str] = set()

    def refuse(body: dict[str, Any]) -> bool:
        if body["data"]["attributes"]["event"] == "tracking_request.failed":
            refused.add(body["data"]["id"])
            return True
        return False

    async def test(service: Service) -> None:
        await service.create(request_type="bill_of_lading", request_number="ONEY123456789", scac="ONEY")
        await service.create(request_type="booking_number", request_number="987654321", auto_detect_vocc_scac=True)
        await service.settled()
        listing = await service.get("/webhook_notifications", include="reference_object,webhook", **{"page[size]": 1})
        assert listing["meta"]["total"] == 2 and "next" in listing["links"]
        pages = [
            listing,
            await service.get("/webhook_notifications", include="reference_object,webhook", **{"page[number]": 2, "page[size]": 1}),
        ]
        notifications = [n for page in pages for n in page["data"]]
        status = {n["attributes"]["event"]: n["attributes"]["delivery_status"] for n in notifications}
        assert status == {"tracking_request.succeeded": "succeeded", "tracking_request.failed": "failed"}
        assert {n["id"] for n in notifications if n["attributes"]["event"] == "tracking_request.failed"} == refused
        included = {(r["type"], r["id"]) for page in pages for r in page["included"]}
        assert {
            (n["relationships"]["reference_object"]["data"]["type"], n["relationships"]["reference_object"]["data"]["id"])
            for n in notifications
        } <= included
        assert any(type_ == "webhook" for type_, _ in included)
        one = await service.get(f"/webhook_notifications/{notifications[0]['id']}")
        assert one["data"] == notifications[0]
        assert (await service.client.get("/webhook_notifications/no-such-notification")).status_code == 404

    run(test, refuse)


def test_staged_values_go_to_the_container_they_name() -> None:
    async def test(service: Service) -> None:
        number = container_number("MAEU", "246801")
        made = await service.create(
            request_type="container",
            request_number=number,
            scac="MAEU",
            initial_custom_fields={
                "containers": [
                    {"api_slug": "po_number", "value": "PO-9", "number": number},
                    {"api_slug": "priority", "value": "low", "number": "MSCU0000000"},
                ]
            },
        )
        assert made.status_code == 201, made.text
        await service.settled()
        staged = {(cf["attributes"]["api_slug"], cf["attributes"]["value"]) for cf in service.account.custom_fields.values()}
        assert staged == {("po_number", "PO-9")}  # the named box; none for a number not on the shipment

    run(test)


def test_a_webhook_that_keeps_failing_is_turned_off_until_turned_on_again() -> None:
    async def test(service: Service) -> None:
        (webhook,) = service.account.webhooks.values()
        for n in range(3):
            await service.create(request_type="bill_of_lading", request_number=f"ONEY12345678{n}", scac="ONEY")
        await service.settled()
        assert webhook["attributes"]["active"] is False  # three notifications in a row failed for good
        assert (await service.get(f"/webhooks/{webhook['id']}"))["data"]["attributes"]["active"] is False
        turned_on = await service.client.patch(
            f"/webhooks/{webhook['id']}", json={"data": {"type": "webhook", "attributes": {"active": True}}}
        )
        assert turned_on.json()["data"]["attributes"]["active"] is True and service.account.failures_in_a_row == {}

    run(test, refuse=lambda body: True, deactivate_after=3)


def test_raw_events_hold_the_carriers_past_and_expected_milestones() -> None:
    async def test(service: Service) -> None:
        account = service.account
        now = account.clock.strftime("%Y-%m-%dT%H:%M:%SZ")
        box = next(
            c
            for c in account.of_type("container")
            if account.plans[account.shipment_of[c["id"]]].containers[c["id"]].steps[0].at
            < account.clock
            < account.plans[account.shipment_of[c["id"]]].containers[c["id"]].steps[-1].at
        )
        raw = (await service.get(f"/containers/{box['id']}/raw_events"))["data"]
        past = [r for r in raw if not r["attributes"]["estimated"]]
        expected = [r for r in raw if r["attributes"]["estimated"]]
        assert past and expected and all(r["attributes"]["created_at"] <= now for r in raw)
        assert all(r["attributes"]["actual_at"] <= now and r["attributes"]["estimated_at"] is None for r in past)
        assert all(r["attributes"]["estimated_at"] > now and r["attributes"]["actual_at"] is None for r in expected)
        served = (await service.get(f"/containers/{box['id']}"))["data"]["relationships"]["raw_events"]["data"]
        assert [r["id"] for r in served] == [r["id"] for r in past]  # the container names those that happened

    run(test)
