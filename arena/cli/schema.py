"""`arena schema`: the JSON Schema of the protocol's messages (protocol.schema_json makes it)."""

from __future__ import annotations


def schema_command() -> None:
    """Print the JSON Schema of every protocol message (referee to bot and back)."""
    from protocol import schema_json

    print(schema_json())


#: The commands of this module by name, for the app to register.
COMMANDS = {"schema": schema_command}
