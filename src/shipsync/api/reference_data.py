"""Metro areas (by UN/LOCODE or id) and document schemas (by `<document_type>@<date>`)."""

from __future__ import annotations

from urllib.parse import quote

from shipsync.api.document_models import DocumentSchema
from shipsync.api.jsonapi import Page
from shipsync.api.place_models import MetroArea
from shipsync.api.transport import Transport


class MetroAreas:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    async def get_page(self, locode_or_id: str) -> Page:
        return await self._t.get_page(f"metro_areas/{quote(locode_or_id, safe='')}")

    async def get(self, locode_or_id: str) -> MetroArea:
        return MetroArea.from_resource((await self.get_page(locode_or_id)).data[0])


class DocumentSchemas:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    async def get_page(self, schema_id: str) -> Page:
        return await self._t.get_page(f"document_schemas/{quote(schema_id, safe='@')}")

    async def get(self, schema_id: str) -> DocumentSchema:
        return DocumentSchema.from_resource((await self.get_page(schema_id)).data[0])
