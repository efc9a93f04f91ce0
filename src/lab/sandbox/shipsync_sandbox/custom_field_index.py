"""An account's custom field values by id, also indexed by entity and slug and by definition, so an
account of 100,000 values answers a per-entity or per-definition read without scanning them all."""

from __future__ import annotations

from typing import Any

Resource = dict[str, Any]
Entity = tuple[str, str]


def entity_of(value: Resource) -> Entity:
    data = value["relationships"]["entity"]["data"]
    return data["type"], data["id"]


def definition_of(value: Resource) -> str:
    definition_id: str = value["relationships"]["definition"]["data"]["id"]
    return definition_id


class CustomFieldStore(dict[str, Resource]):
    """Values by id (insertion order), with the same values by entity and slug and by definition."""

    def __init__(self) -> None:
        super().__init__()
        self._by_entity: dict[Entity, dict[str, Resource]] = {}
        self._by_definition: dict[str, dict[str, Resource]] = {}

    def __setitem__(self, value_id: str, value: Resource) -> None:
        if value_id in self:
            del self[value_id]
        super().__setitem__(value_id, value)
        self._by_entity.setdefault(entity_of(value), {})[value["attributes"]["api_slug"]] = value
        self._by_definition.setdefault(definition_of(value), {})[value_id] = value

    def __delitem__(self, value_id: str) -> None:
        value = self[value_id]
        super().__delitem__(value_id)
        self._by_entity.get(entity_of(value), {}).pop(value["attributes"]["api_slug"], None)
        self._by_definition.get(definition_of(value), {}).pop(value_id, None)

    def of_entity(self, entity: Entity) -> list[Resource]:
        # In the order of the whole store: every insertion goes to the end of both.
        return list(self._by_entity.get(entity, {}).values())

    def on(self, entity: Entity, slug: str) -> Resource | None:
        return self._by_entity.get(entity, {}).get(slug)

    def of_definition(self, definition_id: str) -> list[Resource]:
        return list(self._by_definition.get(definition_id, {}).values())
