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

import bisect
import gc
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import yaml

from ..bounded import BoundedDict
from ..findings import with_article

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


def key_line(mapping: Any, key: Any) -> int:
    """The line ``key`` is written on in ``mapping``; 0 when the mapping holds no position for it."""
    return mapping.key_span(key)[0] if isinstance(mapping, PosMap) and key in mapping else 0


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
    # Lines holding a float with a whole value (`8.0`, `1.0e+3`), which JSON Schema takes for an integer and
    # ci-tools does not; None when the document was not read by the event loader (lines not recorded).
    whole_float_lines: tuple[int, ...] | None = None

    def whole_float_within(self, first_line: int, last_line: int) -> bool:
        """Whether a float with a whole value may be written between these lines (inclusive)."""
        lines = self.whole_float_lines
        if lines is None:
            return True
        at = bisect.bisect_left(lines, first_line)
        return at < len(lines) and lines[at] <= last_line


class _PosLoader(_BaseLoader):
    def __init__(self, stream: str, last_duplicate_wins: bool = False) -> None:
        super().__init__(stream)
        self.duplicates: list[DuplicateKey] = []
        self.last_duplicate_wins = last_duplicate_wins


_STR_TAG = "tag:yaml.org,2002:str"


def _construct_scalar(construct: Callable[[Any, yaml.ScalarNode], Any], constructor: Any, node: yaml.ScalarNode) -> Any:
    """``construct(constructor, node)``; a text that reads as a type but is not a value of it is a YAML error
    at its position (`2026-02-30` is a timestamp to the resolver and no date to Python)."""
    try:
        return construct(constructor, node)
    except (ValueError, OverflowError) as exc:
        kind = str(node.tag).rsplit(":", 1)[-1]
        raise yaml.constructor.ConstructorError(
            None, None, f"`{node.value}` reads as {with_article(kind)} but is not one ({exc})", node.start_mark) from None


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
            return _construct_scalar(constructor, loader, node)
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


def _refuse_tag(what: str) -> Callable[[Any, yaml.Node], Any]:
    def refuse(loader: Any, node: yaml.Node) -> Any:
        raise yaml.constructor.ConstructorError(
            None, None, f"`{node.tag.replace('tag:yaml.org,2002:', '!!')}` makes {what}, which no setting takes; "
            "expected a mapping, a list or a plain value", node.start_mark)
    return refuse


# Tags that build values JSON has no type for: a schema cannot judge them and the code that reads the
# settings does not expect them (a set is unhashable where a value is a key), so they are refused where written.
for _tag, _what in (("set", "a set"), ("omap", "a list of pairs"), ("pairs", "a list of pairs"), ("binary", "bytes")):
    _PosLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _refuse_tag(_what))


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
_MERGE_TAG = "tag:yaml.org,2002:merge"
# What a plain scalar is when it is not data the event loader builds (`<<`, `=`): the node loader's.
_NOT_PLAIN_DATA: Any = object()
# Plain scalars repeat (`8`, `true`, `none`, image names): each text is resolved and built once.  The values
# are immutable (str, int, float, bool, None, dates), so sharing them between documents is safe.
_PLAIN_VALUES: BoundedDict[str, Any] = BoundedDict(100_000)


def _plain_value(text: str, mark: Any) -> Any:
    """A plain scalar's value as PyYAML's resolver and safe constructor make it, or :data:`_NOT_PLAIN_DATA`."""
    tag = _STR_TAG
    for candidate, regexp in (*_IMPLICIT.get(text[0] if text else "", ()), *_IMPLICIT.get(None, ())):
        if regexp.match(text):
            tag = str(candidate)
            break
    if tag == _STR_TAG:
        value: Any = text
    else:
        construct = _SCALARS.yaml_constructors.get(tag)
        if construct is None or tag == _MERGE_TAG:
            return _NOT_PLAIN_DATA  # a merge key, or `=` (which no safe constructor builds): the node loader's
        value = _construct_scalar(construct, _SCALARS, yaml.ScalarNode(tag, text, mark, mark))
        if type(value) is float and value.is_integer():
            return value  # not kept: every place it is written goes through the caller, which records its line
    return _PLAIN_VALUES.put(text, value)


def _event_load(text: str, last_duplicate_wins: bool = False) -> tuple[Any, list[DuplicateKey], list[int]]:
    """The positioned document built straight from libyaml's events.

    Equal, value and positions, to composing nodes and constructing them
    (:class:`_PosLoader`), at a quarter of the cost: no node objects and no
    second walk.  Each container is read by one call that takes its events
    until its end (scalars are read inline: they are most of the events).
    Whatever is not plain data (merge keys, explicit tags, aliases,
    container keys, several documents) raises :class:`_Unusual` for the
    node-based loader to handle, errors included.
    """
    get: Callable[[], Any] = _EventParser(text).get_event
    duplicates: list[DuplicateKey] = []
    whole_floats: list[int] = []
    anchors: dict[str, tuple[Any, Span | None]] = {}
    plain, not_data = _PLAIN_VALUES, _NOT_PLAIN_DATA
    scalar_event, alias_event = yaml.ScalarEvent, yaml.AliasEvent
    map_start, seq_start = yaml.MappingStartEvent, yaml.SequenceStartEvent
    map_end, seq_end = yaml.MappingEndEvent, yaml.SequenceEndEvent

    def unusual_scalar(event: Any) -> Any:
        """A scalar off the fast path: an explicit tag, or plain text seen for the first time."""
        if event.tag is not None and event.tag != "!":
            raise _Unusual
        if not event.implicit[0]:
            return event.value
        value = plain.get(event.value, not_data)
        if value is not_data:
            value = _plain_value(event.value, event.start_mark)
            if value is not_data:
                raise _Unusual
            if type(value) is float and value.is_integer():
                whole_floats.append(event.start_mark.line + 1)
        return value

    def container(start_event: Any, is_map: bool) -> Any:
        """A mapping or a list, read from its start event to its end (one frame per level of nesting)."""
        if start_event.tag is not None and start_event.tag != "!":
            raise _Unusual
        data: Any = PosMap() if is_map else PosSeq()
        anchor = start_event.anchor
        if anchor is not None:
            anchors[anchor] = (data, None)
        if is_map:
            key_spans, value_spans = data.key_spans, data.value_spans
        else:
            append, append_span = data.append, data.item_spans.append
        end = map_end if is_map else seq_end
        key: Any = None
        key_span: Span = NO_SPAN
        want_key = is_map
        while True:
            event = get()
            kind = type(event)
            if kind is scalar_event:  # most events: read right here
                value = event.value
                if event.tag is not None or event.implicit[0]:
                    value = plain.get(value, not_data) if event.tag is None else not_data
                    if value is not_data:
                        value = unusual_scalar(event)
                s, e = event.start_mark, event.end_mark
                span = (s.line + 1, s.column + 1, e.line + 1, e.column + 1)
                if event.anchor is not None:
                    anchors[event.anchor] = (value, span)
            elif kind is end:
                break
            elif kind is alias_event:
                raise _Unusual  # what aliases expand to is bounded by the node loader (alias bombs)
            elif want_key:
                raise _Unusual  # a mapping or list used as a key
            else:
                value = container(event, kind is map_start)
                span = value.span
            if not is_map:
                append(value)
                append_span(span)
            elif want_key:
                key, key_span, want_key = value, span, False
            else:
                want_key = True
                if key in data:
                    duplicates.append(DuplicateKey(str(key), key_spans[key], key_span))
                    if not last_duplicate_wins:
                        continue
                    # Overwritten in place: the key keeps its first place in the mapping, as with PyYAML.
                data[key] = value
                key_spans[key] = key_span
                value_spans[key] = span
        s, e = start_event.start_mark, event.end_mark
        data.span = (s.line + 1, s.column + 1, e.line + 1, e.column + 1)
        if anchor is not None:
            anchors[anchor] = (data, data.span)
        return data

    try:
        get()  # StreamStartEvent
        if type(get()) is yaml.StreamEndEvent:  # else DocumentStartEvent
            return None, duplicates, whole_floats
        event = get()
        kind = type(event)
        if kind is scalar_event:
            root = unusual_scalar(event)
        elif kind is map_start or kind is seq_start:
            root = container(event, kind is map_start)
        else:
            raise _Unusual  # an alias as the whole document
        if type(get()) is not yaml.DocumentEndEvent or type(get()) is not yaml.StreamEndEvent:
            raise _Unusual  # several documents: the node-based loader says so
        return root, duplicates, whole_floats
    finally:
        # `container` calls itself, so it and its closure are a reference cycle holding the parser (libyaml's
        # buffers, tens of KiB): freed here, not left to a collector that a sweep pauses.
        del container


# What aliases (and merge keys, which copy what an alias names) may add to a document: the nodes it would
# have written out in full, beyond the nodes it has.  Real files stay far below it (an srt-slurm recipe's
# `<<: *worker_environment` adds tens); nested anchors ("billion laughs") cross it after a few levels,
# before anything reads the expansion.
ALIAS_EXPANSION_FLOOR = 100_000
ALIAS_EXPANSION_RATIO = 4


def _bound_aliases(root: yaml.Node) -> None:
    """Refuse a document whose aliases expand past the bound, at the node that crosses it, and one whose
    alias names the mapping or list it is inside.

    Each node's size written out (1 + its children's) is computed once per node, however often aliases
    name it, so the count itself is linear in the document."""
    distinct: set[int] = set()
    stack = [root]
    while stack:  # the distinct nodes, without recursion: the bound is a multiple of them
        node = stack.pop()
        if id(node) not in distinct:
            distinct.add(id(node))
            if isinstance(node, yaml.SequenceNode):
                stack.extend(node.value)
            elif isinstance(node, yaml.MappingNode):
                stack.extend(part for pair in node.value for part in pair)
    limit = len(distinct) * ALIAS_EXPANSION_RATIO + ALIAS_EXPANSION_FLOOR
    sizes: dict[int, int] = {}

    def size(node: yaml.Node) -> int:
        found = sizes.get(id(node))
        if found is not None:
            if found < 0:
                raise yaml.composer.ComposerError(
                    None, None, "an alias names the mapping or list it is inside (recursive data); expected "
                    "an alias of a finished part", node.start_mark)
            return found
        sizes[id(node)] = -1
        total = 1
        if isinstance(node, yaml.SequenceNode):
            total += sum(size(child) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            total += sum(size(key) + size(value) for key, value in node.value)
        if total > limit:
            raise yaml.composer.ComposerError(
                None, None, f"aliases expand this document past {limit:,} values (it writes {len(distinct):,}); "
                "expected anchors that repeat a part, not nested ones that multiply it (an alias bomb)",
                node.start_mark)
        sizes[id(node)] = total
        return total

    try:
        size(root)
    finally:
        del size  # it calls itself: a reference cycle holding every node, freed here (the collector may be paused)


def _node_load(text: str, last_duplicate_wins: bool = False) -> tuple[Any, list[DuplicateKey]]:
    loader = _PosLoader(text, last_duplicate_wins)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, loader.duplicates
        _bound_aliases(node)
        return loader.construct_document(node), loader.duplicates
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
    collecting = gc.isenabled()
    # A document is thousands of new containers and no cycle (recursive aliases are refused): the cyclic
    # collector, triggered by every few hundred of them, would only walk them again and again.
    gc.disable()
    whole_floats: list[int] | None = None
    try:
        try:
            if _EventParser is None:
                raise _Unusual
            value, duplicates, whole_floats = _event_load(text, last_duplicate_wins)
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
    except (ValueError, OverflowError) as exc:  # a document that is one such scalar: PyYAML builds it unguarded
        raise YamlLoadError(path, 1, 1, f"invalid YAML: {exc}") from None
    except RecursionError:
        raise YamlLoadError(path, 1, 1, "invalid YAML: nested deeper than this reader follows; expected data "
                                        "nested at most a few hundred levels") from None
    finally:
        if collecting:
            gc.enable()
    return LoadedYaml(path=path, value=value, duplicates=duplicates, text=text,
                      whole_float_lines=None if whole_floats is None else tuple(whole_floats))


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
