"""Validate JSON documents against a JSON Schema.

    validate_schema.py SCHEMA [--def NAME] DOC...

With --def, documents are checked against SCHEMA's $defs/NAME. Prints one line per invalid
document and exits 1 if any is invalid. Used by the Rust integration tests so that the schemas
in the repo are checked against real outputs.
"""
import json
import sys

import jsonschema

args = sys.argv[1:]
schema = json.load(open(args.pop(0), encoding="utf-8"))
jsonschema.Draft202012Validator.check_schema(schema)
if args and args[0] == "--def":
    name = args[1]
    args = args[2:]
    schema = {"$ref": f"#/$defs/{name}", "$defs": schema["$defs"]}
validator = jsonschema.Draft202012Validator(schema)
bad = 0
for path in args:
    doc = json.load(open(path, encoding="utf-8"))
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    for e in errors[:3]:
        print(f"{path}: {'/'.join(map(str, e.path))}: {e.message}")
    bad += bool(errors)
print(f"{len(args) - bad} valid, {bad} invalid")
sys.exit(1 if bad else 0)
