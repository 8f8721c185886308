"""JSON and YAML flag values as keys: what changelogs talk about.

``--compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY", ...}'``,
``--speculative-config "$SPEC_CONFIG"`` and ``--config dsv4-fp4-trt.yml``
(a file the recipe wrote from a here-document) carry the settings that
matter (``cudagraph_mode``, ``num_speculative_tokens``, ``max_batch_size``).
A flag value that is a JSON object, or that names a file the recipe wrote,
is parsed (libyaml reads both JSON and YAML, with positions) into
:class:`~.model.FlagKey` entries, each with the line that wrote it.

A value with unknown pieces (a JSON template with ``"$DRAFT_MODEL_PATH"``
in it) is parsed with a stand-in for each unknown piece: the keys and the
known values are kept; a value holding a stand-in is unknown, with the
expression of the piece it stands for.  A document that does not parse, or
whose keys are unknown, gives no keys (the flag keeps its plain value).
"""

from __future__ import annotations

import dataclasses
import json
import re
from functools import lru_cache
from typing import Any

from ..findings import Location
from ..revision.yamlpos import PosMap, PosSeq, Span, YamlLoadError, load_yaml
from .expand import Piece, line_locations
from .model import FlagKey, ServerFlag, Value
from .streams import file_key

_MARK, _MARK_END = "\ue000", "\ue001"
_MARK_RE = re.compile(f"{_MARK}([0-9]+){_MARK_END}")
_MAX_DOCUMENT = 200_000


def with_keys(flags: list[ServerFlag], files: dict[str, Value]) -> list[ServerFlag]:
    """The flags, each JSON/YAML mapping value (inline or a written file) given its keys."""
    out = flags
    for i, flag in enumerate(flags):
        v = flag.value
        if v is None:
            continue
        written = files.get(file_key(v)) if files else None
        if written is not None:
            keys = document_keys(written)
            source = v.text if v.text is not None else v.expression
        elif _looks_like_object(v):
            keys, source = document_keys(v), ""
        else:
            continue
        if keys:
            if out is flags:
                out = list(flags)
            out[i] = dataclasses.replace(flag, keys=keys, keys_file=source)
    return out


def _looks_like_object(v: Value) -> bool:
    if v.text is not None:
        return v.text.lstrip().startswith("{")
    return bool(v.parts) and (v.parts[0].text or "").lstrip().startswith("{")


def document_keys(value: Value) -> tuple[FlagKey, ...]:
    """The keys of a JSON/YAML mapping held by ``value`` (empty when it is not one)."""
    template = _template(value)
    if template is None:
        return ()
    text, holes = template
    data = _load(text)
    if not isinstance(data, PosMap):
        return ()
    lines = _line_locations(value, holes)
    out: list[FlagKey] = []
    _walk(data, "", text.split("\n"), lines, value, holes, out)
    return tuple(out)


def _template(value: Value) -> tuple[str, dict[int, Value]] | None:
    """The document text, unknown parts replaced by stand-ins (by part index)."""
    if value.text is not None:
        return (value.text, {}) if len(value.text) <= _MAX_DOCUMENT else None
    if not value.parts:
        return None
    holes: dict[int, Value] = {}
    chunks: list[str] = []
    for i, part in enumerate(value.parts):
        if part.text is None:
            holes[i] = part
            chunks.append(f"{_MARK}{i}{_MARK_END}")
        else:
            chunks.append(part.text)
    return "".join(chunks), holes


@lru_cache(maxsize=512)
def _load(text: str) -> Any:
    try:
        return load_yaml(text, "<flag value>").value
    except YamlLoadError:
        return None


def _line_locations(value: Value, holes: dict[int, Value]) -> tuple[Location, ...]:
    if not holes:
        return value.lines
    pieces = [Piece(p.text if p.text is not None else f"{_MARK}{i}{_MARK_END}", p) for i, p in enumerate(value.parts)]
    return line_locations(pieces, value.location)


def _walk(node: Any, prefix: str, doc: list[str], lines: tuple[Location, ...], value: Value,
          holes: dict[int, Value], out: list[FlagKey]) -> None:
    if isinstance(node, PosMap):
        for key, child in node.items():
            name = plain_text(key)
            if _MARK in name:
                continue  # a key that is not known
            path = f"{prefix}.{name}" if prefix else name
            _visit(child, path, node.value_span(key), doc, lines, value, holes, out)
    elif isinstance(node, PosSeq):
        for i, child in enumerate(node):
            _visit(child, f"{prefix}[{i}]", node.item_span(i), doc, lines, value, holes, out)


def _visit(child: Any, path: str, span: Span, doc: list[str], lines: tuple[Location, ...], value: Value,
           holes: dict[int, Value], out: list[FlagKey]) -> None:
    if isinstance(child, PosMap) and child:
        _walk(child, path, doc, lines, value, holes, out)
        return
    if isinstance(child, PosSeq) and any(isinstance(x, (PosMap, PosSeq)) for x in child):
        _walk(child, path, doc, lines, value, holes, out)
        return
    text = _leaf_text(child, span, doc)
    line = span[0] - 1
    where = lines[line] if 0 <= line < len(lines) else value.location
    out.append(FlagKey(path, _leaf_value(text, where, value, holes)))


def _leaf_value(text: str, where: Location, value: Value, holes: dict[int, Value]) -> Value:
    if _MARK not in text:
        return Value(text, where, value.conditional)
    whole = _MARK_RE.fullmatch(text)
    if whole is not None:
        part = holes[int(whole.group(1))]
        return Value(None, part.location, value.conditional or part.conditional, part.expression,
                     alternatives=part.alternatives)
    shown = _MARK_RE.sub(lambda m: holes[int(m.group(1))].expression or "?", text)
    return Value(None, where, value.conditional, shown)


def _leaf_text(child: Any, span: Span, doc: list[str]) -> str:
    if isinstance(child, str):
        return child
    if isinstance(child, list):
        return scalar_list_text(child)
    if isinstance(child, dict):
        return "{}"
    written = written_text(span, doc)
    if written is not None:
        return written
    return plain_text(child)


def written_text(span: Span, doc: list[str]) -> str | None:
    """A number or boolean as the author wrote it (``0.90``, ``True``), when it sits on one line."""
    line, column, end_line, end_column = span
    if line != end_line or not 0 < line <= len(doc):
        return None
    text = doc[line - 1][column - 1:end_column - 1].strip()
    return text or None


def scalar_list_text(items: list[Any]) -> str:
    """A list of scalars as one key's text: compact JSON (``[1,2,4]``)."""
    return json.dumps([_json_scalar(x) for x in items], separators=(",", ":"), ensure_ascii=False)


def _json_scalar(x: Any) -> Any:
    return x if isinstance(x, (str, int, float, bool)) or x is None else plain_text(x)


def plain_text(x: Any) -> str:
    """A scalar as a key's text when how it was written is not known (``true``, ``null``, ``3``)."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if x is None:
        return "null"
    return str(x)
