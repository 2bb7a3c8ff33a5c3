"""Prints the server's settings (section -> field -> JSON schema) for the extension's package.json; a renamed
field's old name has its new one in `renamed_to`."""

import json

from greenloop.settings import OLD_LOOP_NAMES, Settings

sections = {}
for name, field in Settings.model_fields.items():
    model = field.annotation
    sections[name] = model.model_json_schema()["properties"]  # type: ignore[union-attr]
for old, new in OLD_LOOP_NAMES.items():  # still read under the old name: the editor offers it as deprecated
    sections["loop"][old] = {**sections["loop"][new], "renamed_to": new}
print(json.dumps(sections))
