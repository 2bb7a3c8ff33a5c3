"""Prints the server's settings (section -> field -> JSON schema) for the extension's package.json."""

import json

from greenloop.settings import Settings

sections = {}
for name, field in Settings.model_fields.items():
    model = field.annotation
    sections[name] = model.model_json_schema()["properties"]  # type: ignore[union-attr]
print(json.dumps(sections))
