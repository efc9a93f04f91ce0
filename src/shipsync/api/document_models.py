"""Documents (the service's Documents beta) and document schemas, declared once (see
`api.declared`), and one document with the related resources that came with it."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from shipsync.api.declared import Declared, link, link_table
from shipsync.api.models import Included, Ref


class Document(Declared):
    resource_types: ClassVar[tuple[str, ...]] = ("document",)
    table_name: ClassVar[str] = "documents"
    row_is: ClassVar[str] = "One row per document (the service's Documents beta)."
    # Written by `pull documents` only: it replaces each document's links to shipments and containers.
    from_included: ClassVar[bool] = False

    name: str | None = None
    document_type: str | None = None
    # A person's override of the type.
    document_type_manual: str | None = None
    classification_notes: str | None = None
    source: str | None = None
    file_name: str | None = None
    file_content_type: str | None = None
    file_size_bytes: int | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    account: Ref | None = None
    user: Ref | None = None
    email_submission: Ref | None = None
    last_document_representation: Ref | None = None
    shipments: list[Ref] = link_table("document_shipments", "shipment_id")
    # Containers, as the service names them here.
    cargos: list[Ref] = link_table("document_containers", "container_id")
    download_link: str | None = link()


class DocumentSchema(Declared):
    resource_types: ClassVar[tuple[str, ...]] = ("document_schema",)
    table_name: ClassVar[str] = "document_schemas"
    row_is: ClassVar[str] = "One row per version of a document schema, by `<document_type>@<date>`."
    # Written by `pull document-schemas` only (read one by one, by id).
    from_included: ClassVar[bool] = False

    document_type: str | None = None
    label: str | None = None
    schema_version: str | None = None
    full_version: str | None = None
    current: bool | None = None
    draft: bool | None = None
    active_at: datetime | None = None
    schema_format: str | None = None
    description: str | None = None
    schema_payload: dict[str, Any] | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class DocumentWithIncluded(BaseModel):
    """One document and the related resources that came with it."""

    document: Document
    included: list[Included] = Field(default_factory=list)

    def related(self, ref: Ref | None) -> Included | None:
        if ref is None:
            return None
        return next((r for r in self.included if r.type == ref.type and r.id == ref.id), None)

    @property
    def account_company_name(self) -> str | None:
        account = self.related(self.document.account)
        name = account.attributes.get("company_name") if account else None
        return name if isinstance(name, str) else None
