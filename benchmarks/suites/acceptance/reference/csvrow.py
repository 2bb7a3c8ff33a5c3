"""Reference solution (for checking the hidden tests, never shown to the loop)."""

def parse_row(line):
    fields, field, quoted, i = [], "", False, 0
    while i < len(line):
        ch = line[i]
        if quoted:
            if ch == '"' and line[i + 1 : i + 2] == '"':
                field, i = field + '"', i + 1
            elif ch == '"':
                quoted = False
            else:
                field += ch
        elif ch == '"':
            quoted = True
        elif ch == ",":
            fields.append(field)
            field = ""
        else:
            field += ch
        i += 1
    if quoted:
        raise ValueError("a quoted field is never closed")
    return [*fields, field]
