"""Validate JSON documents against a JSON Schema: validate_schema.py SCHEMA DOC...

Prints one line per invalid document and exits 1 if any is invalid. Used by the Rust
integration tests so that the schema in the repo is checked against real outputs.
"""
import json
import sys

import jsonschema

schema = json.load(open(sys.argv[1], encoding="utf-8"))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
bad = 0
for path in sys.argv[2:]:
    doc = json.load(open(path, encoding="utf-8"))
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    for e in errors[:3]:
        print(f"{path}: {'/'.join(map(str, e.path))}: {e.message}")
    bad += bool(errors)
print(f"{len(sys.argv) - 2 - bad} valid, {bad} invalid")
sys.exit(1 if bad else 0)
