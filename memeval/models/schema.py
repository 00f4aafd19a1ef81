"""A valid instance of a requested shape, filled with the facts of the input.

Two ways a caller names the shape: a JSON Schema (`response_format: json_schema`, a tool's
`parameters`), or, with `json_object`, only an example in the prompt ("Output: {"memory":
[...]}"). Either way the answer is built, never guessed at: every required property is
present with its type, every enum and const is honoured, and a list of texts or objects gets
one entry per fact, so an extraction prompt is answered with what the input stated.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeGuard

EPOCH = "1970-01-01T00:00:00Z"
_OBJECT_START = re.compile(r"\{\s*\"")


def instance(schema: dict[str, Any], facts: list[str]) -> Any:
    """A value that validates against `schema`; its `$defs` resolve `$ref`s anywhere inside."""
    return _Filler(schema, facts).value(schema, 0)


class _Filler:
    def __init__(self, root: dict[str, Any], facts: list[str]) -> None:
        self.defs = {**root.get("definitions", {}), **root.get("$defs", {})}
        self.facts = facts

    def fact(self, index: int) -> str:
        if not self.facts:
            return "nothing stated"
        return self.facts[min(index, len(self.facts) - 1)]

    def value(self, schema: dict[str, Any], index: int) -> Any:
        schema = self.resolve(schema)
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            return schema["enum"][0]
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return self.value(self.branch(schema[key]), index)
        if "allOf" in schema:
            merged: dict[str, Any] = {}
            for part in schema["allOf"]:
                merged.update(self.resolve(part))
            return self.value(merged, index)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind is None:
            kind = "object" if "properties" in schema else "string"
        return getattr(self, f"_{kind}")(schema, index)

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            schema = {
                **self.defs[schema["$ref"].rsplit("/", 1)[-1]],
                **{k: v for k, v in schema.items() if k != "$ref"},
            }
        return schema

    def branch(self, options: list[dict[str, Any]]) -> dict[str, Any]:
        """A date may be absent: a stand-in states no time it was not given. Otherwise the first
        branch that is not null."""
        resolved = [self.resolve(o) for o in options]
        real = [o for o in resolved if o.get("type") != "null"]
        if len(real) < len(resolved) and all(
            o.get("format") in ("date", "date-time") for o in real
        ):
            return {"type": "null"}
        return real[0] if real else {"type": "null"}

    def _object(self, schema: dict[str, Any], index: int) -> dict[str, Any]:
        props: dict[str, Any] = schema.get("properties", {})
        out: dict[str, Any] = {}
        for name in schema.get("required", []):
            prop = self.resolve(props[name])
            # An item's own id is its position, as in the examples extraction prompts show.
            is_id = name == "id" and prop.get("type") == "string"
            out[name] = str(index) if is_id else self.value(prop, index)
        return out

    def _array(self, schema: dict[str, Any], index: int) -> list[Any]:
        items = self.resolve(schema.get("items", {}))
        wanted = len(self.facts) if _holds_text(items, self) else 0
        wanted = max(wanted, schema.get("minItems", 0))
        wanted = min(wanted, schema.get("maxItems", wanted))
        return [self.value(items, i) for i in range(wanted)]

    def _string(self, schema: dict[str, Any], index: int) -> str:
        if schema.get("format") in ("date", "date-time"):
            return EPOCH[:10] if schema["format"] == "date" else EPOCH
        text = self.fact(index)
        if "maxLength" in schema:
            text = text[: schema["maxLength"]]
        return text.ljust(schema.get("minLength", 0), ".")

    def _integer(self, schema: dict[str, Any], index: int) -> int:
        return int(schema.get("minimum", 0))

    def _number(self, schema: dict[str, Any], index: int) -> float:
        return float(schema.get("minimum", 0))

    def _boolean(self, schema: dict[str, Any], index: int) -> bool:
        return False

    def _null(self, schema: dict[str, Any], index: int) -> None:
        return None


def _holds_text(items: dict[str, Any], filler: _Filler) -> bool:
    """Lists of texts, or of objects with a required text, are what extraction asks for."""
    if items.get("type") == "string" and "format" not in items and "enum" not in items:
        return True
    props = items.get("properties", {})
    return any(
        filler.resolve(props[name]).get("type") == "string" for name in items.get("required", [])
    )


def example_shape(prompt: str) -> dict[str, Any] | None:
    """The first JSON object in `prompt` that holds a list of objects (the output example a
    `json_object` prompt shows, turned into a schema) or is itself a JSON Schema of an object
    (cognee's fallback puts its response model's schema in the system prompt)."""
    decoder = json.JSONDecoder()
    for match in _OBJECT_START.finditer(prompt):
        try:
            example, _ = decoder.raw_decode(prompt[match.start() :])
        except ValueError:
            continue
        if _is_object_schema(example):
            return example
        if isinstance(example, dict) and any(
            isinstance(v, list) and v and isinstance(v[0], dict) for v in example.values()
        ):
            return _schema_of(example)
    return None


def _is_object_schema(value: Any) -> TypeGuard[dict[str, Any]]:
    return (
        isinstance(value, dict)
        and value.get("type") == "object"
        and isinstance(value.get("properties"), dict)
    )


def _schema_of(example: Any) -> dict[str, Any]:
    if isinstance(example, dict):
        return {
            "type": "object",
            "properties": {k: _schema_of(v) for k, v in example.items()},
            "required": list(example),
        }
    if isinstance(example, list):
        return {"type": "array", "items": _schema_of(example[0]) if example else {}}
    if isinstance(example, bool):
        return {"type": "boolean"}
    if isinstance(example, int):
        return {"type": "integer"}
    if isinstance(example, float):
        return {"type": "number"}
    return {"type": "string"}
