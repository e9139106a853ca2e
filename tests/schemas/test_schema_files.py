"""The committed JSON Schema files match the models (regenerate with `lmrbench schema export`)."""

from __future__ import annotations

from pathlib import Path

from lmrbench.schemas.export import render_schemas

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schema"


def test_committed_json_schemas_are_current() -> None:
    rendered = render_schemas()
    on_disk = {p.name: p.read_text() for p in SCHEMA_DIR.glob("*.schema.json")}
    stale = sorted(n for n in rendered if on_disk.get(n) != rendered[n])
    extra = sorted(set(on_disk) - set(rendered))
    assert not stale and not extra, (
        f"schema files out of date ({stale or extra}); run `lmrbench schema export --out schema`"
    )


def test_every_field_documents_itself() -> None:
    from lmrbench.schemas.export import exported_models

    for name, model in exported_models().items():
        for field, info in model.model_fields.items():
            assert info.description, f"{name}: {model.__name__}.{field} has no docstring"
