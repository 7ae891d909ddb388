"""The JSON Schemas of the lab's files, and validation against them.

results.schema.json is results.json's shape, published for whoever reads
the lab's results (docs/results.md); suites.schema.json is suites.toml's,
as TOML parses it.  Each problem comes back as one line: where, as a key
path (triggers[3].verdict), and what is wrong; a value's "title" is the
phrase of "must be ..." where it has one.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

HERE = Path(__file__).resolve().parent
RESULTS = "results"
SUITES = "suites"
_VALUE_MAX = 60        # characters of a value quoted in a message


@dataclass(frozen=True)
class Problem:
    """One way an instance fails its schema."""

    path: tuple[str | int, ...]   # the keys and indexes down to the value
    validator: str                # the schema keyword it fails: "type", "required", ...
    schema: dict[str, Any]        # the part of the schema it fails
    value: Any                    # the value there

    @property
    def where(self) -> str:
        """The key path: triggers[3].verdict ("" for the whole document)."""
        out = ""
        for part in self.path:
            out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
        return out

    def what(self) -> str:
        """What is wrong, in one line."""
        got = _short(self.value)
        if self.validator == "required":
            missing = [k for k in self.schema["required"] if k not in self.value]
            return f"lacks {', '.join(missing)}"
        if self.validator == "additionalProperties":
            known = self.schema.get("properties", {})
            return f"unknown key {', '.join(repr(k) for k in self.value if k not in known)}"
        if "enum" in self.schema:
            return f"must be {' or '.join(json.dumps(a) for a in self.schema['enum'])}, got {got}"
        if self.schema.get("type") == "object" and self.validator == "type":
            return f"must be an object, got {got}"
        if "title" in self.schema and self.validator in ("type", "oneOf", "minItems",
                                                           "minLength"):
            return f"must be {self.schema['title']}, got {got}"
        if self.validator == "type":
            types = self.schema["type"]
            types = types if isinstance(types, list) else [types]
            return f"must be of type {' or '.join(types)}, got {got}"
        if self.validator == "pattern":
            return f"{got} does not match {self.schema['pattern']}"
        return f"{self.validator} {json.dumps(self.schema.get(self.validator))}, got {got}"

    def __str__(self) -> str:
        return f"{self.where}: {self.what()}" if self.path else self.what()


@cache
def schema(name: str) -> dict[str, Any]:
    """The schema NAME (RESULTS, SUITES), read from NAME.schema.json."""
    loaded: dict[str, Any] = json.loads((HERE / f"{name}.schema.json").read_text())
    return loaded


@cache
def _validator(name: str, definition: str | None) -> Any:
    whole = schema(name)
    if definition is None:
        return jsonschema.Draft202012Validator(whole)
    return jsonschema.Draft202012Validator(
        {"$defs": whole["$defs"], "$ref": f"#/$defs/{definition}"})


def problems(instance: Any, name: str, definition: str | None = None) -> list[Problem]:
    """Every way instance fails the schema NAME (or the part of it under
    $defs/DEFINITION: "report"), in the order the validator finds them (an
    array's items in order)."""
    return [Problem(tuple(error.absolute_path), str(error.validator),
                    error.schema if isinstance(error.schema, dict) else {}, error.instance)
            for error in _validator(name, definition).iter_errors(instance)]


def first_problem(instance: Any, name: str) -> str | None:
    """The first problem of instance against the schema NAME, as one line;
    None when it is valid."""
    found = problems(instance, name)
    return str(found[0]) if found else None


def _short(value: Any) -> str:
    text = repr(value)
    text = text if text.isprintable() else text.encode("unicode_escape").decode("ascii")
    return text if len(text) <= _VALUE_MAX else f"{text[:_VALUE_MAX]}... ({len(text)} characters)"
