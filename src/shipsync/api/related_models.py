"""Related records of a document, declared once (see `api.declared`): the account and the user it
belongs to, the email it arrived with and its extraction."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from pydantic import Field

from shipsync.api.declared import Declared
from shipsync.api.models import Ref


class Account(Declared):
    resource_types: ClassVar[tuple[str, ...]] = ("account",)
    table_name: ClassVar[str] = "accounts"
    row_is: ClassVar[str] = "One row per account that owns documents."

    company_name: str | None = None


class User(Declared):
    """The reference shows no member of a user: whatever the service sends is kept in `leftovers`."""

    resource_types: ClassVar[tuple[str, ...]] = ("user",)
    table_name: ClassVar[str] = "users"
    row_is: ClassVar[str] = "One row per user who added documents."


class EmailSubmission(Declared):
    resource_types: ClassVar[tuple[str, ...]] = ("email_submission",)
    table_name: ClassVar[str] = "email_submissions"
    row_is: ClassVar[str] = "One row per email that brought documents."

    subject: str | None = None
    body: str | None = None
    # What a document's included email carries in place of `body` (the reference's
    # `document_email_submission`): the start of it.
    body_preview: str | None = None
    # `from` is a Python keyword: the field is `from_`, the member and the column `from`; a list of
    # addresses, like `to` (api-facts).
    from_: list[str] | None = Field(default=None, alias="from")
    to: list[str] | None = None
    cc: list[str] | None = None
    references: list[str] | None = None
    sent_at: datetime | None = None
    message_id: str | None = None
    in_reply_to: str | None = None
    content_type: str | None = None
    documents_count: int | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    account: Ref | None = None
    user: Ref | None = None
    documents: list[Ref] = Field(default_factory=list)


class DocumentRepresentation(Declared):
    resource_types: ClassVar[tuple[str, ...]] = ("document_representation",)
    table_name: ClassVar[str] = "document_representations"
    row_is: ClassVar[str] = "One row per extraction of a document."

    # The public version of the document schema it follows (as in `document_schemas.schema_version`).
    schema_version: str | None = None
    payload: dict[str, Any] | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
