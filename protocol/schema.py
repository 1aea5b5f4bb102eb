"""The JSON Schema (draft 2020-12) of every protocol message, for ``arena schema``.

Generated from the Structs in :mod:`protocol.messages`, so it cannot drift from
the code. Each Struct's docstring gives its title and description, and the
docstring's ``Attributes:`` section gives each property's description.
"""

from __future__ import annotations

import inspect
import json
import re
from typing import Any

import msgspec

from . import messages
from .messages import PROTOCOL_NAME, PROTOCOL_VERSION, Reply, Request

_REF = "#/$defs/{name}"
_ATTRIBUTE = re.compile(r"^    (\w+): (.*)$")
_ROLE = re.compile(r":\w+:`~?([^`]+)`")  # Sphinx roles such as :class:`Action`


def json_schema() -> dict[str, Any]:
    """The schema of every message: ``$defs/Request`` (referee to bot, tagged by
    ``type``), ``$defs/Reply`` (bot to referee) and one definition per Struct.
    The root accepts any message of either direction."""
    (request, reply), components = msgspec.json.schema_components((Request, Reply), ref_template=_REF)
    structs = {
        name: cls
        for name, cls in vars(messages).items()
        if isinstance(cls, type) and issubclass(cls, msgspec.Struct) and name in components
    }
    for name, cls in structs.items():
        _document(components[name], cls)
    request["title"] = "Request"
    request["description"] = "A message from the referee to a bot; every one carries `id`."
    reply["title"] = "Reply"
    reply["description"] = "A message from a bot to the referee; every one carries `re`."
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"Sushi Go! Arena bot protocol: {PROTOCOL_NAME} v{PROTOCOL_VERSION}",
        "description": (
            "One JSON object per line, UTF-8, newline-terminated; the `type` field names the "
            "message. Unknown fields are ignored; integers are never booleans or floats."
        ),
        "anyOf": [{"$ref": _REF.format(name="Request")}, {"$ref": _REF.format(name="Reply")}],
        "$defs": {"Request": request, "Reply": reply, **dict(sorted(components.items()))},
    }


def schema_json() -> str:
    """:func:`json_schema` as pretty-printed JSON text, newline-terminated."""
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


def field_docs(cls: type[msgspec.Struct]) -> tuple[str, str, dict[str, str]]:
    """A Struct's docstring split into title, description and per-field text
    (from its ``Attributes:`` section), as plain text: wrapped lines joined,
    Sphinx roles reduced to their target."""
    doc = _ROLE.sub(r"`\1`", inspect.cleandoc(cls.__doc__ or "")).replace("``", "`")
    head, _, attributes = doc.partition("\nAttributes:\n")
    title, _, description = head.strip().partition("\n\n")
    fields: dict[str, str] = {}
    name = None
    for line in attributes.splitlines():
        match = _ATTRIBUTE.match(line)
        if match:
            name = match.group(1)
            fields[name] = match.group(2).strip()
        elif name and line.strip():
            fields[name] += " " + line.strip()
    paragraphs = (" ".join(p.split()) for p in description.split("\n\n"))
    return " ".join(title.split()), "\n\n".join(p for p in paragraphs if p), fields


def _document(schema: dict[str, Any], cls: type[msgspec.Struct]) -> None:
    title, description, fields = field_docs(cls)
    schema["title"] = cls.__name__
    schema["description"] = f"{title}\n\n{description}" if description else title
    properties = schema.get("properties", {})
    tag = cls.__struct_config__.tag
    if "type" in properties and tag is not None:
        properties["type"]["description"] = f'Always "{tag}".'
    for field, text in fields.items():
        if field in properties:
            properties[field]["description"] = text
