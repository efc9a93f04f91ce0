"""The JSON Schemas of the service's resources and answers, written from its reference
(tests/contract/schemas), as one registry the contract tests validate against."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

SCHEMAS = Path(__file__).parents[1] / "contract" / "schemas"
BASE = "https://shipsync.test/schemas/"


def _registry() -> Registry:
    resources = []
    for path in sorted(SCHEMAS.glob("*.json")):
        contents = json.loads(path.read_text())
        resources.append((contents["$id"], Resource.from_contents(contents)))
    return Registry().with_resources(resources)


REGISTRY = _registry()


def validator(schema: dict[str, Any]) -> Draft202012Validator:
    return Draft202012Validator(schema, registry=REGISTRY)


def answer_validator(kind: str) -> Draft202012Validator:
    """An answer of one kind: `single`, `listing`, `collection`, `errors` or a webhook `delivery`."""
    return validator({"$ref": f"{BASE}documents.json#/$defs/{kind}"})
