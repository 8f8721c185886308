"""Fast YAML loading that keeps the position of every key and value.

libyaml's C parser does the heavy lifting; the containers are built straight
from its events, and that is where positions are recorded (documents with
merge keys, explicit tags or other rarities go through PyYAML's composer and
constructor instead, with the same result).  Scalars cannot carry attributes, so positions live on
the containers: :class:`PosMap` knows where each of its keys and values is,
:class:`PosSeq` where each item is.

Duplicate keys are recorded instead of silently overwriting (PyYAML keeps the
last one); the first value is kept so that nothing the author wrote first is
lost from view, and both positions are reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import yaml

try:  # libyaml is optional in PyYAML builds; fall back to the pure-Python one.
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - depends on the build
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

# (line, column, end_line, end_column), all 1-based.
Span = tuple[int, int, int, int]
NO_SPAN: Span = (0, 0, 0, 0)


def _span(node: yaml.Node) -> Span:
    s, e = node.start_mark, node.end_mark
    return (s.line + 1, s.column + 1, e.line + 1, e.column + 1)


class PosMap(dict[Any, Any]):
    """A mapping that remembers where its keys and values were written."""

    span: Span = NO_SPAN

    def __init__(self) -> None:
        super().__init__()
        self.key_spans: dict[Any, Span] = {}
        self.value_spans: dict[Any, Span] = {}

    def key_span(self, key: Any) -> Span:
        return self.key_spans.get(key, self.span)

    def value_span(self, key: Any) -> Span:
        return self.value_spans.get(key, self.key_span(key))


class PosSeq(list[Any]):
    """A sequence that remembers where each item was written."""

    span: Span = NO_SPAN

    def __init__(self) -> None:
        super().__init__()
        self.item_spans: list[Span] = []

    def item_span(self, index: int) -> Span:
        if 0 <= index < len(self.item_spans):
            return self.item_spans[index]
        return self.span


@dataclass(frozen=True)
class DuplicateKey:
    key: str
    first: Span
    second: Span


class YamlLoadError(Exception):
    """A file that is not valid YAML (or not UTF-8); carries a position."""

    def __init__(self, path: str, line: int, column: int, message: str) -> None:
        self.path = path
        self.line = line
        self.column = column
        self.message = message
        super().__init__(f"{path}:{line}:{column}: {message}")


@dataclass
class LoadedYaml:
    path: str
    value: Any
    duplicates: list[DuplicateKey] = field(default_factory=list)
    text: str = ""


class _PosLoader(_BaseLoader):
    def __init__(self, stream: str, last_duplicate_wins: bool = False) -> None:
        super().__init__(stream)
        self.duplicates: list[DuplicateKey] = []
        self.last_duplicate_wins = last_duplicate_wins


_STR_TAG = "tag:yaml.org,2002:str"


def _construct_child(loader: _PosLoader, node: yaml.Node) -> Any:
    """``construct_object(node, deep=True)`` with a fast path for scalars.

    Scalars are most of a config and immutable, so they skip the generic
    bookkeeping (alias table, recursion guard); strings skip even the
    constructor call.  Anything else, and any unusual tag, takes the generic
    path with its checks and errors.
    """
    if type(node) is yaml.ScalarNode:
        tag = node.tag
        if tag == _STR_TAG:
            return node.value
        constructor = loader.yaml_constructors.get(tag)
        if constructor is not None:
            return constructor(loader, node)
    return loader.construct_object(node, deep=True)


def _construct_map(loader: _PosLoader, node: yaml.MappingNode) -> Iterator[PosMap]:
    data = PosMap()
    data.span = _span(node)
    yield data
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        key = _construct_child(loader, key_node)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark,
                "found an unhashable key (a list or mapping used as a key)", key_node.start_mark,
            ) from None
        if key in data:
            loader.duplicates.append(
                DuplicateKey(str(key), data.key_spans[key], _span(key_node))
            )
            if not loader.last_duplicate_wins:
                continue
            # Overwritten in place: the key keeps its first position, as with PyYAML.
        data[key] = _construct_child(loader, value_node)
        data.key_spans[key] = _span(key_node)
        data.value_spans[key] = _span(value_node)


def _construct_seq(loader: _PosLoader, node: yaml.SequenceNode) -> Iterator[PosSeq]:
    data = PosSeq()
    data.span = _span(node)
    yield data
    for child in node.value:
        data.append(_construct_child(loader, child))
        data.item_spans.append(_span(child))


_PosLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)
_PosLoader.add_constructor("tag:yaml.org,2002:seq", _construct_seq)


def decode_utf8(data: bytes, path: str) -> str:
    """Decode strictly; a bad byte is reported at its line and column."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise YamlLoadError(
            path, line, column,
            f"file is not valid UTF-8: found byte 0x{data[exc.start]:02x}, expected UTF-8 text",
        ) from None


class _Unusual(Exception):
    """A document the event loader leaves to the node-based loader (merge keys, explicit tags, complex keys, ...)."""


try:  # libyaml's parser, used directly: its events carry everything a positioned load needs
    from yaml._yaml import CParser
    _EventParser: Any = CParser
except ImportError:  # pragma: no cover - depends on the build
    _EventParser = None

_IMPLICIT = yaml.resolver.Resolver.yaml_implicit_resolvers
# Builds the non-string plain scalars (int, float, bool, null, timestamps) as PyYAML's safe loader does.
_SCALARS = yaml.constructor.SafeConstructor()


def _plain_tag(value: str) -> str:
    """The tag PyYAML's resolver gives a plain scalar (str unless it reads as null, bool, int, float, ...)."""
    found = _PLAIN_TAGS.get(value)
    if found is None:
        found = _STR_TAG
        for tag, regexp in (*_IMPLICIT.get(value[0] if value else "", ()), *_IMPLICIT.get(None, ())):
            if regexp.match(value):
                found = str(tag)
                break
        if len(_PLAIN_TAGS) > 100_000:
            _PLAIN_TAGS.clear()
        _PLAIN_TAGS[value] = found
    return found


# Plain scalars repeat (`8`, `true`, `none`, image names): each is resolved once.
_PLAIN_TAGS: dict[str, str] = {}


def _event_load(text: str, last_duplicate_wins: bool = False) -> tuple[Any, list[DuplicateKey]]:
    """The positioned document built straight from libyaml's events.

    Equal, value and positions, to composing nodes and constructing them
    (:class:`_PosLoader`), at a third of the cost: no node objects and no
    second walk.  Whatever is not plain data (merge keys, explicit tags,
    anchors on keys, container keys, several documents) raises
    :class:`_Unusual` for the node-based loader to handle, errors included.
    """
    parser = _EventParser(text)
    get: Callable[[], Any] = parser.get_event
    duplicates: list[DuplicateKey] = []
    anchors: dict[str, Any] = {}
    # Open containers: [container, is_map, pending key, its span, key given, anchor]
    stack: list[list[Any]] = []
    root: Any = None
    scalar, alias = yaml.ScalarEvent, yaml.AliasEvent
    map_start, seq_start = yaml.MappingStartEvent, yaml.SequenceStartEvent
    map_end, seq_end = yaml.MappingEndEvent, yaml.SequenceEndEvent
    get()  # StreamStartEvent
    event = get()
    if type(event) is yaml.StreamEndEvent:
        return None, duplicates
    while True:
        event = get()
        kind = type(event)
        if kind is scalar:
            value = event.value
            if event.tag is not None and event.tag != "!":
                raise _Unusual
            if event.implicit[0]:
                tag = _plain_tag(value)
                if tag != _STR_TAG:
                    if tag == "tag:yaml.org,2002:merge":
                        raise _Unusual
                    node = yaml.ScalarNode(tag, value, event.start_mark, event.end_mark)
                    value = _SCALARS.yaml_constructors[tag](_SCALARS, node)
            start, end = event.start_mark, event.end_mark
            span = (start.line + 1, start.column + 1, end.line + 1, end.column + 1)
            if event.anchor is not None:
                anchors[event.anchor] = (value, span)
        elif kind is map_start or kind is seq_start:
            if event.tag is not None and event.tag != "!":
                raise _Unusual
            container: Any = PosMap() if kind is map_start else PosSeq()
            start = event.start_mark
            container.span = (start.line + 1, start.column + 1, 0, 0)
            if stack and stack[-1][1] and not stack[-1][4]:
                raise _Unusual  # a mapping or list used as a key
            if event.anchor is not None:
                anchors[event.anchor] = (container, None)
            stack.append([container, kind is map_start, None, None, False, event.anchor])
            continue
        elif kind is map_end or kind is seq_end:
            value, anchor = stack[-1][0], stack.pop()[5]
            end = event.end_mark
            span = value.span = (value.span[0], value.span[1], end.line + 1, end.column + 1)
            if anchor is not None:
                anchors[anchor] = (value, span)
        elif kind is alias:
            # An alias is the anchored value itself, positions included (as when composing nodes).
            if event.anchor not in anchors:
                raise _Unusual  # the node-based loader reports the undefined alias
            value, span = anchors[event.anchor]
            if span is None:
                raise _Unusual  # an alias of a container still open (recursive data)
        elif kind is yaml.DocumentEndEvent:
            if type(get()) is not yaml.StreamEndEvent:
                raise _Unusual  # several documents: the node-based loader says so
            return root, duplicates
        else:  # pragma: no cover - libyaml emits no other event inside a document
            raise _Unusual
        if not stack:
            root = value
            continue
        top = stack[-1]
        if not top[1]:
            top[0].append(value)
            top[0].item_spans.append(span)
        elif not top[4]:
            if kind is not scalar and kind is not alias:
                raise _Unusual
            try:
                hash(value)
            except TypeError:
                raise _Unusual from None
            top[2], top[3], top[4] = value, span, True
        else:
            mapping, key = top[0], top[2]
            top[4] = False
            if key in mapping:
                duplicates.append(DuplicateKey(str(key), mapping.key_spans[key], top[3]))
                if not last_duplicate_wins:
                    continue
            mapping[key] = value
            mapping.key_spans[key] = top[3]
            mapping.value_spans[key] = span


def _node_load(text: str, last_duplicate_wins: bool = False) -> tuple[Any, list[DuplicateKey]]:
    loader = _PosLoader(text, last_duplicate_wins)
    try:
        return loader.get_single_data(), loader.duplicates
    finally:
        loader.dispose()


def load_yaml(source: str | bytes, path: str, *, last_duplicate_wins: bool = False) -> LoadedYaml:
    """Load one YAML document with positions.

    Raises :class:`YamlLoadError` for invalid UTF-8 or YAML, with the position
    libyaml reports.  An empty document loads as ``None``.  Duplicate keys
    are recorded either way; ``last_duplicate_wins`` keeps the later value,
    as ``yaml.safe_load`` does, for files read by tools that use it.
    """
    text = decode_utf8(source, path) if isinstance(source, bytes) else source
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        try:
            if _EventParser is None:
                raise _Unusual
            value, duplicates = _event_load(text, last_duplicate_wins)
        except _Unusual:
            value, duplicates = _node_load(text, last_duplicate_wins)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        column = mark.column + 1 if mark else 1
        problem = exc.problem or "invalid YAML"
        if exc.context:
            problem = f"{problem} ({exc.context})"
        raise YamlLoadError(path, line, column, f"invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise YamlLoadError(path, 1, 1, f"invalid YAML: {exc}") from None
    return LoadedYaml(path=path, value=value, duplicates=duplicates, text=text)


def describe_type(value: Any) -> str:
    """How a person would name the YAML type of a value, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the number {value}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f'the string "{shown}"'
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__
