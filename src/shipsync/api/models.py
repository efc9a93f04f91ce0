"""The base of every resource model (`ApiModel`), relationship targets (`Ref`), and `Included` for
related resources kept generic. The models themselves are declarations (`api.declared`), in
`tracking_models`, `place_models`, `related_models`, `document_models` and `account_models`.

Each model is built from a JSON:API resource dict by `from_resource`: attributes become fields,
relationships become `Ref`s (or lists of them), `links.self` becomes `self_link`. The service may
answer any member null, absent, of another type or with a value never seen before: a member that
does not fit its field is left at the field's default (the resource as sent stays in `raw`), so
reading an answer never fails, and never makes a write that already happened look failed.
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from shipsync.api.jsonapi import JsonObject, relationships_of


class Ref(BaseModel):
    """A relationship's target: `{type, id}`."""

    model_config = ConfigDict(frozen=True)
    type: str
    id: str


def tolerant(model: type[BaseModel], values: dict[str, Any]) -> Any:
    """Validate, dropping each top-level member that does not fit (so its field keeps its default)."""
    values = dict(values)
    while True:
        try:
            return model.model_validate(values)
        except ValidationError as exc:
            bad = {error["loc"][0] for error in exc.errors() if error["loc"] and error["loc"][0] in values}
            if not bad:
                raise
            for name in bad:
                del values[name]


class ApiModel(BaseModel):
    """Common part of every resource model."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    id: str
    type: str
    self_link: str | None = None
    _raw: JsonObject = PrivateAttr(default_factory=dict)

    @property
    def raw(self) -> JsonObject:
        """The resource exactly as the service sent it."""
        return self._raw

    @classmethod
    def from_resource(cls, resource: JsonObject) -> Self:
        model: Self = tolerant(cls, cls.resource_values(resource))
        model._raw = resource
        return model

    @classmethod
    def resource_values(cls, resource: JsonObject) -> dict[str, Any]:
        """The fields' values as sent: attributes, relationships' data, `<name>_link`s, id and type."""
        attributes = resource.get("attributes")
        values: dict[str, Any] = dict(attributes) if isinstance(attributes, dict) else {}
        for name, rel in relationships_of(resource).items():
            if isinstance(rel, dict) and "data" in rel:
                values[name] = rel["data"]
        links = resource.get("links")
        for name, link in (links if isinstance(links, dict) else {}).items():
            values[f"{name}_link"] = link
        values["id"] = str(resource["id"])
        values["type"] = str(resource["type"])
        return values


class Included(BaseModel):
    """Any related resource, kept generic because the spec does not show its fields."""

    model_config = ConfigDict(extra="ignore")
    id: str
    type: str
    attributes: dict[str, Any] = Field(default_factory=dict)
    relationships: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def from_resource(cls, resource: JsonObject) -> Included:
        values = {"id": str(resource["id"]), "type": str(resource["type"])}
        for name in ("attributes", "relationships"):
            if isinstance(resource.get(name), dict):
                values[name] = resource[name]
        return cls.model_validate(values)
