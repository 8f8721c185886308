"""Word expansion: quoting, parameters, arithmetic, word splitting.

A word expands to *fields* (the argv entries it becomes).  Each field is a
list of pieces, and each piece remembers the :class:`Value` it came from, so
that ``--max-num-seqs "$MAX_NUM_SEQS"`` reports the line where
``MAX_NUM_SEQS`` was assigned, and ``--flag="$X"`` can still attribute the
part after ``=`` to ``X``.  Anything the shell would only know at run time
(command substitution, ``$RANDOM``, the runner's own variables) is a piece
with ``text=None``: unknown, never guessed.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field

from ..findings import Location
from .arith import evaluate_arith, parse_int
from .model import MissingEnv, Value
from .parse import Node
from .state import ArrayVal, Binding, State

# Variables a runner's environment provides beyond the job contract: their
# value is not known from the repository.  Every other unset variable is
# empty, as the recipe receives exactly the contract's environment.
RUNTIME_VARIABLES = frozenset({
    "HOME", "PATH", "USER", "PWD", "OLDPWD", "HOSTNAME", "SHELL", "TMPDIR", "RANDOM", "SECONDS",
    "BASHPID", "PPID", "UID", "EUID", "LINENO", "HF_TOKEN", "HF_HOME", "HF_HUB_CACHE",
    "HUGGING_FACE_HUB_TOKEN", "GITHUB_WORKSPACE", "GITHUB_RUN_ID", "GITHUB_SHA", "GITHUB_REF",
    "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV", "RUNNER_TEMP", "RUNNER_WORKSPACE",
    "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "SLURM_JOB_ID", "BASH_SOURCE",
})


# What a recorded call reads when it reads ``$0`` (no variable has this name).
SCRIPT_NAME = "$0"


@dataclass(slots=True)
class Piece:
    text: str | None
    origin: Value | None = None
    # Where a literal piece of several lines starts (its lines follow from there).
    where: Location | None = None


def line_locations(pieces: list[Piece], fallback: Location) -> tuple[Location, ...]:
    """Where each line of the pieces' joined text was written (the line's first character decides).

    A literal piece counts lines from where it starts; a piece from a variable takes the lines of
    that variable's value (or its location); anything else falls back to ``fallback``.
    """
    out: list[Location] = []
    at_line_start = True
    for p in pieces:
        text = p.text or ""
        offset = 0
        line = 0  # of the piece: newlines before ``offset``
        while offset <= len(text):
            if at_line_start and offset < len(text):
                out.append(_location_within(p, line, fallback))
                at_line_start = False
            nl = text.find("\n", offset)
            if nl < 0:
                break
            offset = nl + 1
            line += 1
            at_line_start = True
    if at_line_start:
        out.append(out[-1] if out else fallback)  # an empty last line (text ending in a newline)
    return tuple(out)


def _location_within(p: Piece, line: int, fallback: Location) -> Location:
    """Where line ``line`` (0-based) of the piece's text was written."""
    if p.origin is not None:
        return p.origin.line_location(line) if p.origin.lines else p.origin.location
    if p.where is not None:
        if line == 0:
            return p.where
        w = p.where
        return Location(w.path, w.line + line, 0, w.line + line, 0, w.note)
    return fallback


@dataclass(slots=True)
class Field:
    pieces: list[Piece] = field(default_factory=list)

    @property
    def text(self) -> str | None:
        out = []
        for p in self.pieces:
            if p.text is None:
                return None
            out.append(p.text)
        return "".join(out)


class ShellExit(Exception):
    """``exit`` (or a fatal expansion): ends the script, or the subshell it runs in."""

    def __init__(self, code: str, node: Node | None, *, missing_env: bool = False) -> None:
        super().__init__(code)
        self.code = code
        self.node = node
        self.missing_env = missing_env


def unescape_word(text: str) -> str:
    if "\\" not in text:
        return text
    return re.sub(r"\\(.)", r"\1", text, flags=re.S).replace("\\\n", "")


def unescape_dquoted(text: str) -> str:
    if "\\" not in text:
        return text
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


_ANSI = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "a": "\a", "e": "\x1b", "0": "\0"}


def unescape_heredoc(text: str) -> str:
    """Backslashes in an unquoted here-document escape only ``$``, `` ` ``, ``\\`` and the newline."""
    if "\\" not in text:
        return text
    return re.sub(r'\\([$`\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def _strip_leading_tabs(pieces: list[Piece]) -> list[Piece]:
    """``<<-``: leading tabs of each line are removed (of the literal text, where bash removes them)."""
    out: list[Piece] = []
    at_line_start = True
    for p in pieces:
        if p.origin is None and p.text:
            lines = p.text.split("\n")
            stripped = [line.lstrip("\t") if (i > 0 or at_line_start) else line for i, line in enumerate(lines)]
            out.append(Piece("\n".join(stripped), None, p.where))
        else:
            out.append(p)
        if p.text:
            at_line_start = p.text.endswith("\n")
    return out


def unescape_ansi(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ANSI.get(m.group(1), "\\" + m.group(1)), text)


def glob_to_regex(pattern: str) -> str:
    return fnmatch.translate(pattern)[:-2]  # drop the \Z anchor, keep the (?s:...) group


_WORD = re.compile(r"\S+")  # what str.split() splits on


class FieldBuilder:
    """Collects pieces into fields, splitting unquoted expansions on whitespace."""

    def __init__(self) -> None:
        self.fields: list[Field] = []
        self.current: Field | None = None
        # Quoted "${A[@]}" / "$@" expansions that had no element: a double-quoted string made only of
        # such expansions and empty text is no word at all (see Expander._word).
        self.vanished = 0

    def add(self, piece: Piece) -> None:
        if self.current is None:
            self.current = Field()
            self.fields.append(self.current)
        self.current.pieces.append(piece)

    def end_field(self) -> None:
        self.current = None

    def add_split(self, text: str | None, origin: Value | None) -> None:
        if text is None:
            self.add(Piece(None, origin))
            return
        if not text.strip():
            if text:
                self.end_field()
            return
        if text[0].isspace():
            self.end_field()
        if origin is not None and origin.spans:
            self._split_written(text, origin)
        else:
            words = text.split()
            for i, w in enumerate(words):
                if i:
                    self.end_field()
                self.add(Piece(w, origin))
        if text[-1].isspace():
            self.end_field()

    def _split_written(self, text: str, origin: Value) -> None:
        """Words of a value whose parts were written in different places (see ``Value.spans``): each word
        points at where it was written (a flag of a recipe YAML's ``extra-args`` at its line)."""
        from .spans import written_at

        at_char = at_byte = 0
        for i, m in enumerate(_WORD.finditer(text)):
            if i:
                self.end_field()
            start = at_byte + len(text[at_char:m.start()].encode())
            end = start + len(m.group().encode())
            at_char, at_byte = m.end(), end
            where = written_at(origin.spans, start, end)
            word = m.group()
            self.add(Piece(word, origin if where is None else
                           Value(word, where, origin.conditional, origin.expression)))


class Expander:
    """Expands words against a :class:`State`; the interpreter subclasses it."""

    state: State
    recipe_path: str

    def command_output(self, n: Node) -> Value:
        """The value of ``$(...)``: unknown here; the interpreter computes what it can."""
        return Value(None, n.location(), False, n.text)

    def file_test(self, op: str, path: str | None) -> bool | None:
        """``[[ -f PATH ]]`` and the other file tests: what the files are is known only at run time."""
        return None

    def heredoc_value(self, redirect: Node) -> Value:
        """The text a here-document feeds its command, each line attributed to its source line."""
        start = redirect.child_of_type("heredoc_start")
        body = redirect.child_of_type("heredoc_body")
        strip_tabs = bool(redirect.children) and redirect.children[0].type == "<<-"
        if body is None:
            return Value("", redirect.location(), False, redirect.text)
        source = body.script.source
        quoted = start is not None and any(q in start.text for q in "'\"\\")
        pieces: list[Piece] = []

        def literal(a: int, b: int) -> None:
            if a < b:
                raw = source[a:b].decode("utf-8", "replace")
                text = raw if quoted else unescape_heredoc(raw)
                line, _ = body.script.position(a)
                pieces.append(Piece(text, None, Location(body.script.path, line, 0, line, 0)))

        at = body.start
        if not quoted:
            for c in body.children:
                if c.type == "heredoc_content" or not c.named:
                    continue
                literal(at, c.start)
                at = c.end
                fb = FieldBuilder()
                self._word(c, fb, quoted=True)
                pieces.extend(p for f in fb.fields for p in f.pieces)
        literal(at, body.end)
        if strip_tabs:
            pieces = _strip_leading_tabs(pieces)
        texts = [p.text for p in pieces]
        location = body.location()
        if any(t is None for t in texts):
            return Value(None, location, False, redirect.text, known_prefix=known_prefix(pieces),
                         parts=parts_of(pieces, location))
        text = "".join(t for t in texts if t is not None)
        return Value(text, location, any(p.origin is not None and p.origin.conditional for p in pieces),
                     redirect.text.split("\n", 1)[0], lines=line_locations(pieces, location))

    # -- variables ---------------------------------------------------------------------------
    # Names read while a function call's reads are recorded (see interp.CallMemo); None otherwise.
    reads: set[str] | None = None
    # ... and the files the recipe wrote that it reads back (by streams.file_key).
    file_reads: set[str] | None = None

    def read_file(self, key: str) -> Value | None:
        """The content of a file the recipe wrote (None: it wrote none at ``key``)."""
        if self.file_reads is not None:
            self.file_reads.add(key)
        return self.state.files.get(key)

    def lookup(self, name: str, node: Node) -> Binding | None:
        """The binding of a variable; None when it is unset."""
        if self.reads is not None:
            self.reads.add(name)
        return self.state.vars.get(name)

    def scalar(self, name: str, node: Node) -> Value | None:
        """A variable's scalar value (first element of an array), None when unset."""
        if name.isdigit():
            index = int(name)
            if index == 0:
                return self.script_name(node)
            pos = self.state.positional
            return pos[index - 1] if index <= len(pos) else None
        if name == "#":
            return Value(str(len(self.state.positional)), node.location(), expression="$#")
        if name in ("?", "$", "!", "-", "_"):
            return Value(None, node.location(), expression=f"${name}")
        b = self.lookup(name, node)
        if b is None:
            if name in RUNTIME_VARIABLES:
                return Value(None, node.location(), expression=f"${name}")
            return None
        if isinstance(b, ArrayVal):
            return b.items[0] if b.items else Value(None if b.open else "", b.location, b.conditional, b.expression)
        return b

    def elements(self, name: str, node: Node) -> list[Value]:
        """The items of an array (one unknown item stands for those of unknown number that may follow)."""
        if name in ("@", "*"):
            return list(self.state.positional)
        b = self.lookup(name, node)
        if b is None:
            v = self.scalar(name, node)
            return [v] if v is not None else []
        if isinstance(b, ArrayVal):
            return [*b.items, Value(None, b.location, True, b.expression)] if b.open else list(b.items)
        return [b]

    def script_name(self, node: Node) -> Value:
        """``$0``; a recorded call that reads it depends on which script runs (see interp.CallMemo)."""
        if self.reads is not None:
            self.reads.add(SCRIPT_NAME)
        return Value(self.recipe_path, node.location(), expression="$0")

    def assign_scalar(self, name: str, value: Value) -> None:
        self.state.vars[name] = value

    # -- words -------------------------------------------------------------------------------
    def _word_memo(self, n: Node) -> object:
        """What a word is, derived once: (text, Value, Field) when literal, NAME for "$NAME", else False."""
        m = n.memo
        if m is None:
            text = literal_text(n)
            if text is not None and "\n" not in text:
                m = (text, Value(text, n.location(), False, n.text), Field([Piece(text)]))
            elif text is not None:
                m = False  # a text of several lines: expanded piece by piece, to keep where each line is
            else:
                m = _quoted_variable(n) or False
            n.memo = m
        return m

    def literal(self, n: Node) -> tuple[str, Value] | None:
        """A word that expands to one fixed field whatever the state: its text and value (cached)."""
        m = self._word_memo(n)
        return (m[0], m[1]) if isinstance(m, tuple) else None

    def argv(self, nodes: list[Node] | tuple[Node, ...]) -> list[tuple[Field, Value]]:
        """argv fields of a sequence of words, each with its value.

        A literal word's Field is shared between calls: consumers only read fields.
        """
        out: list[tuple[Field, Value]] = []
        append = out.append
        for n in nodes:
            m = n.memo if n.memo is not None else self._word_memo(n)
            if isinstance(m, tuple):
                append((m[2], m[1]))
                continue
            if isinstance(m, str):
                # "$NAME": the variable's own value, one field.
                v = self.scalar(m, n)
                if v is not None:
                    append((Field([Piece(v.text, v)]), v))
                else:
                    append((Field([Piece("")]), Value("", n.location(), False, n.text)))
                continue
            fb = FieldBuilder()
            self._word(n, fb, quoted=False)
            out.extend((f, self.field_value(f, n)) for f in fb.fields)
        return out

    def fields(self, nodes: list[Node] | tuple[Node, ...]) -> list[Field]:
        """argv fields of a sequence of words."""
        out: list[Field] = []
        for n in nodes:
            lit = self.literal(n)
            if lit is not None:
                out.append(Field([Piece(lit[0])]))
                continue
            fb = FieldBuilder()
            self._word(n, fb, quoted=False)
            out.extend(fb.fields)
        return out

    def field_value(self, f: Field, node: Node) -> Value:
        """The :class:`Value` of one field: its origin when one variable makes it up entirely."""
        pieces = significant(f.pieces)
        if len(pieces) == 1 and pieces[0].origin is not None:
            p = pieces[0]
            o = p.origin
            assert o is not None
            if p.text == o.text:
                return o
            return Value(p.text, o.location, o.conditional, o.expression)
        conditional = any(p.origin is not None and p.origin.conditional for p in f.pieces)
        text = f.text
        if text is None:
            return Value(None, node.location(), conditional, node.text, known_prefix=known_prefix(f.pieces),
                         parts=parts_of(f.pieces, node.location()))
        lines = line_locations(f.pieces, node.location()) if "\n" in text else ()
        return Value(text, node.location(), conditional, node.text, lines=lines)

    def values(self, nodes: list[Node] | tuple[Node, ...]) -> list[Value]:
        out: list[Value] = []
        for n in nodes:
            lit = self.literal(n)
            if lit is not None:
                out.append(lit[1])
                continue
            fb = FieldBuilder()
            self._word(n, fb, quoted=False)
            out.extend(self.field_value(f, n) for f in fb.fields)
        return out

    def scalar_text(self, node: Node) -> tuple[str | None, list[Piece]]:
        """A word expanded without splitting (assignment right sides, ``case`` words, test operands)."""
        m = node.memo if node.memo is not None else self._word_memo(node)
        if isinstance(m, tuple):
            return m[0], [Piece(m[0])]
        if isinstance(m, str):
            v = self.scalar(m, node)
            return (v.text, [Piece(v.text, v)]) if v is not None else ("", [Piece("")])
        fb = FieldBuilder()
        self._word(node, fb, quoted=True)
        fields = fb.fields
        if len(fields) == 1:
            pieces = fields[0].pieces
        else:
            pieces = [p for i, f in enumerate(fields) for p in ([Piece(" ")] if i else []) + f.pieces]
        out = []
        for p in pieces:
            if p.text is None:
                return None, pieces
            out.append(p.text)
        return "".join(out), pieces

    def scalar_value(self, node: Node, location: Location, expression: str) -> Value:
        text, all_pieces = self.scalar_text(node)
        return self.scalar_of(text, all_pieces, location, expression)

    def scalar_of(self, text: str | None, all_pieces: list[Piece], location: Location, expression: str,
                  spans: tuple[tuple[int, Location | Value], ...] = ()) -> Value:
        """The value of a word expanded without splitting, from its text and pieces (see :meth:`scalar_text`).

        ``spans``: where the parts of a known text were written (see ``Value.spans``).
        """
        pieces = significant(all_pieces)
        if len(pieces) == 1 and pieces[0].origin is not None and pieces[0].origin.text == text:
            o = pieces[0].origin
            return Value(text, location, o.conditional, expression, o.alternatives, o.known_prefix, o.parts, o.lines,
                         spans)
        conditional = any(p.origin is not None and p.origin.conditional for p in pieces)
        if text is None:
            return Value(None, location, conditional, expression, known_prefix=known_prefix(all_pieces),
                         parts=parts_of(all_pieces, location))
        lines = line_locations(all_pieces, location) if "\n" in text else ()
        return Value(text, location, conditional, expression, lines=lines, spans=spans)

    def _word(self, n: Node, fb: FieldBuilder, quoted: bool) -> None:
        t = n.type
        if t in ("word", "number", "extglob_pattern", "regex", "test_operator"):
            fb.add(Piece(unescape_word(n.text) if t == "word" else n.text))
        elif t == "string":
            # "..." always yields a field, even when empty; "${A[@]}" may yield several, or none: bash drops
            # the word when the quotes hold an array expansion of no element and nothing else but empty text
            # ("${A[@]}" and "${A[@]}$EMPTY" are no word, "x${A[@]}" and "${A[@]}""" are one).
            opened, first, vanished = fb.current is None, len(fb.fields), fb.vanished
            fb.add(Piece(""))
            chunks = n.memo if isinstance(n.memo, list) else None
            if chunks is None:
                chunks = string_chunks(n)
                if not isinstance(n.memo, (tuple, str)):
                    # not a one-line literal nor "$NAME" (whose memos say so): its chunks, derived once
                    n.memo = chunks
            for kind, item in chunks:
                if isinstance(item, str):
                    where = _offset_location(n, kind) if "\n" in item else None
                    fb.add(Piece(unescape_dquoted(item), None, where))
                else:
                    self._word(item, fb, quoted=True)
            if opened and fb.vanished != vanished and all(
                    p.text == "" for f in fb.fields[first:] for p in f.pieces):
                del fb.fields[first:]
                fb.current = None
        elif t == "raw_string":
            fb.add(Piece(n.text[1:-1], None, n.location() if "\n" in n.text else None))
        elif t == "ansi_c_string":
            fb.add(Piece(unescape_ansi(n.text[2:-1])))
        elif t == "translated_string":
            for c in n.children:
                self._word(c, fb, quoted=True)
        elif t == "concatenation":
            for c in n.children:
                self._word(c, fb, quoted)
        elif t == "simple_expansion":
            self._simple_expansion(n, fb, quoted)
        elif t == "expansion":
            self._expansion(n, fb, quoted)
        elif t == "arithmetic_expansion":
            inner = [c for c in n.children if c.named]
            result = evaluate_arith(self, inner[0]) if inner else 0
            text = None if result is None else str(result)
            fb.add(Piece(text, Value(text, n.location(), False, n.text)))
        elif t == "command_substitution":
            v = self.command_output(n)
            if quoted:
                fb.add(Piece(v.text, v))
            else:
                fb.add_split(v.text, v)
        elif t == "process_substitution":
            fb.add(Piece(None, Value(None, n.location(), False, n.text)))
        elif t == "brace_expression":
            fb.add(Piece(None, Value(None, n.location(), False, n.text)))
        elif t in ("$", "'", '"') or not n.named:
            fb.add(Piece(n.text))
        else:
            fb.add(Piece(None, Value(None, n.location(), False, n.text)))

    def _emit(self, v: Value | None, fb: FieldBuilder, quoted: bool) -> None:
        if v is None:
            if quoted:
                fb.add(Piece(""))
            return
        if quoted:
            fb.add(Piece(v.text, v))
        else:
            fb.add_split(v.text, v)

    def _emit_all(self, items: list[Value], fb: FieldBuilder, quoted: bool, star: bool, n: Node) -> None:
        if not items and quoted and not star:
            fb.vanished += 1
        if star and quoted:
            # "${A[*]}": one field, the items joined by the first character of IFS (each piece still names
            # its item): `$(IFS=,; echo "${URLS[*]}")` is a comma-separated list.
            if not items:
                fb.add(Piece(""))
            separator = self._star_separator(n) if len(items) > 1 else Piece("")
            for i, v in enumerate(items):
                if i:
                    fb.add(separator)
                fb.add(Piece(v.text, v))
            return
        for i, v in enumerate(items):
            if i and quoted:
                fb.end_field()
            self._emit(v, fb, quoted)

    def _star_separator(self, n: Node) -> Piece:
        """What joins the items of "${A[*]}" and "$*": a space while IFS is unset, else its first character
        (nothing when IFS is empty); unknown when IFS is."""
        if self.lookup("IFS", n) is None:
            return Piece(" ")
        ifs = self.scalar("IFS", n)
        if ifs is None or ifs.text is None or ifs.conditional:
            return Piece(None, Value(None, n.location(), False, "${IFS:0:1}"))
        return Piece(ifs.text[:1])

    def _simple_expansion(self, n: Node, fb: FieldBuilder, quoted: bool) -> None:
        name_node = next((c for c in n.children if c.type in ("variable_name", "special_variable_name")), None)
        if name_node is None:
            fb.add(Piece(n.text))
            return
        name = name_node.text
        if name in ("@", "*"):
            self._emit_all(self.elements(name, n), fb, quoted, name == "*", n)
            return
        self._emit(self.scalar(name, n), fb, quoted)

    def _expansion(self, n: Node, fb: FieldBuilder, quoted: bool) -> None:
        kids = [c for c in n.children if c.type not in ("${", "}")]
        if not kids:
            fb.add(Piece(None, Value(None, n.location(), False, n.text)))
            return
        length = indirect = False
        if kids[0].type == "#" and len(kids) > 1:
            length, kids = True, kids[1:]
        elif kids[0].type == "!" and len(kids) > 1:
            indirect, kids = True, kids[1:]
        target, rest = kids[0], kids[1:]
        name, index = self._target(target)
        if name is None:
            fb.add(Piece(None, Value(None, n.location(), False, n.text)))
            return
        if indirect:
            ref = self.scalar(name, n)
            if ref is None or ref.text is None or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", ref.text):
                fb.add(Piece(None, Value(None, n.location(), False, n.text)))
                return
            name = ref.text
        if (index in ("@", "*") or name in ("@", "*")) and rest and rest[0].type == ":":
            # ${@:2}, ${ARR[@]:1:2}: a slice of the elements (positional: $0 is index 0).
            nums = [parse_int(c.text) for c in rest[1:] if c.type in ("number", "word")]
            items = self.elements(name, n)
            offset = nums[0] if nums and nums[0] is not None else 0
            if name in ("@", "*"):
                offset = max(offset - 1, 0)
            end = offset + nums[1] if len(nums) > 1 and nums[1] is not None else None
            self._emit_all(items[offset:end], fb, quoted, (index or name) == "*", n)
            return
        if index in ("@", "*") and not rest:
            items = self.elements(name, n)
            if length:
                count = None if self._open_array(name, n) else str(len(items))
                fb.add(Piece(count, Value(count, n.location(), False, n.text)))
            else:
                self._emit_all(items, fb, quoted, index == "*", n)
            return
        value = self._indexed(name, index, n)
        if length:
            text = None if value is None or value.text is None else str(len(value.text))
            if value is None:
                text = "0"
            fb.add(Piece(text, Value(text, n.location(), bool(value and value.conditional), n.text)))
            return
        if rest:
            value = self._operator(name, value, rest, n)
        self._emit(value, fb, quoted)

    def _target(self, node: Node) -> tuple[str | None, str | None]:
        if node.type in ("variable_name", "special_variable_name"):
            return node.text, None
        if node.type == "subscript":
            name = node.child_of_type("variable_name")
            inner = [c for c in node.children if c.named and c is not name]
            if name is None or not inner:
                return None, None
            idx_text, _ = self.scalar_text(inner[0])
            return name.text, idx_text
        if node.type in ("word", "number") and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?]", node.text):
            return node.text, None
        return None, None

    def _indexed(self, name: str, index: str | None, n: Node) -> Value | None:
        if index is None:
            return self.scalar(name, n)
        b = self.lookup(name, n)
        if isinstance(b, ArrayVal) and b.keys is not None:
            # ${MAP[$KEY]}: an unset key expands to nothing (so ${MAP[$KEY]:-default} gives the default).
            return b.get(index)
        if not index.lstrip("-").isdigit():
            return Value(None, n.location(), False, n.text)
        i = int(index)
        if isinstance(b, ArrayVal) and b.open and not 0 <= i < len(b.items):
            return Value(None, n.location(), True, n.text)  # an item of unknown number may be there
        items = self.elements(name, n)
        try:
            return items[i]
        except IndexError:
            return None

    def _open_array(self, name: str, n: Node) -> bool:
        b = self.lookup(name, n) if name not in ("@", "*") else None
        return isinstance(b, ArrayVal) and b.open

    def _operand(self, nodes: list[Node], n: Node) -> Value:
        if not nodes:
            return Value("", n.location(), False, n.text)
        fb = FieldBuilder()
        for c in nodes:
            self._word(c, fb, quoted=True)
        pieces = significant([p for f in fb.fields for p in f.pieces])
        if len(pieces) == 1 and pieces[0].origin is not None and pieces[0].origin.text is not None:
            return pieces[0].origin
        texts = [p.text for p in pieces]
        text = None if any(t is None for t in texts) else "".join(t for t in texts if t is not None)
        return Value(text, n.location(), False, n.text)

    def _operator(self, name: str, value: Value | None, rest: list[Node], n: Node) -> Value | None:
        op = rest[0].text
        operand_nodes = rest[1:]
        unknown = Value(None, n.location(), bool(value and value.conditional), n.text)
        if op in (":-", "-", ":=", "=", ":+", "+", ":?", "?"):
            colon = op.startswith(":")
            if value is not None and value.text is None:
                return unknown
            is_set = value is not None and (not colon or value.text != "")
            kind = op[-1]
            if kind == "-":
                return value if is_set else self._operand(operand_nodes, n)
            if kind == "=":
                if is_set:
                    return value
                default = self._operand(operand_nodes, n)
                assigned = Value(default.text, n.location(), default.conditional, n.text)
                self.assign_scalar(name, assigned)
                return assigned
            if kind == "+":
                return self._operand(operand_nodes, n) if is_set else None
            if not is_set:
                self.state.missing.append(MissingEnv(name, n.location()))
                raise ShellExit("1", n, missing_env=True)
            return value
        if value is None:
            value = Value("", n.location(), False, n.text)
        if value.text is None:
            return unknown
        text = value.text
        operand = self._operand(operand_nodes, n)
        if op in (",,", "^^", ",", "^"):
            new = text.lower() if op == ",," else text.upper() if op == "^^" else (
                text[:1].lower() + text[1:] if op == "," else text[:1].upper() + text[1:])
            return Value(new, value.location, value.conditional, n.text)
        if operand.text is None:
            return unknown
        pat = operand.text
        if op in ("#", "##", "%", "%%"):
            return Value(_trim(text, pat, op), value.location, value.conditional, n.text)
        if op in ("/", "//", "/#", "/%"):
            repl_nodes = operand_nodes
            pattern_nodes, replacement_nodes = repl_nodes, []
            for i, c in enumerate(repl_nodes):
                if c.type == "/":
                    pattern_nodes, replacement_nodes = repl_nodes[:i], repl_nodes[i + 1:]
                    break
            p = self._operand(pattern_nodes, n).text
            r = self._operand(replacement_nodes, n).text if replacement_nodes else ""
            if p is None or r is None:
                return unknown
            regex = glob_to_regex(p)
            if op == "/#":
                regex = "^" + regex
            elif op == "/%":
                regex = regex + "$"
            new = re.sub(regex, lambda _m: r, text, count=0 if op == "//" else 1)
            return Value(new, value.location, value.conditional, n.text)
        if op == ":":
            nums = [c.text for c in operand_nodes if c.type in ("number", "word")]
            try:
                offset = int(nums[0]) if nums else 0
                sub = text[offset:] if len(nums) < 2 else text[offset:offset + int(nums[1])]
            except ValueError:
                return unknown
            return Value(sub, value.location, value.conditional, n.text)
        return unknown


_LITERAL_TYPES = frozenset({"word", "number", "raw_string", "ansi_c_string", "string", "concatenation"})


def literal_text(n: Node) -> str | None:
    """The fixed text of a word without expansions, or None."""
    t = n.type
    if t == "word":
        return unescape_word(n.text)
    if t == "number":
        return n.text
    if t == "raw_string":
        return n.text[1:-1]
    if t == "ansi_c_string":
        return unescape_ansi(n.text[2:-1])
    if t == "string":
        parts = []
        for _, item in string_chunks(n):
            if not isinstance(item, str):
                return None
            parts.append(unescape_dquoted(item))
        return "".join(parts)
    if t == "concatenation":
        out = []
        for c in n.children:
            if c.type not in _LITERAL_TYPES:
                return None
            text = literal_text(c)
            if text is None:
                return None
            out.append(text)
        return "".join(out)
    return None


def string_chunks(n: Node) -> list[tuple[int, str | Node]]:
    """The literal text and the expansions of a "..." string, in order, each with its byte offset.

    tree-sitter leaves some characters of a string outside its ``string_content`` children (the
    newlines of a multi-line string among them): the literal text is read from the source between
    the quotes, not from those children alone.
    """
    source = n.script.source
    out: list[tuple[int, str | Node]] = []
    at: int | None = None
    for c in n.children:
        if c.type == '"':
            if at is None:
                at = c.end
                continue
            if c.start > at:
                out.append((at, source[at:c.start].decode("utf-8", "replace")))
            at = c.end
            continue
        if at is None:
            at = n.start
        if c.start > at:
            out.append((at, source[at:c.start].decode("utf-8", "replace")))
        if c.type == "string_content":
            out.append((c.start, c.text))
        else:
            # ...and the blanks before an expansion inside its `$` token ("$a $b": the second node is " $b").
            lead = len(c.text) - len(c.text.lstrip())
            if lead:
                out.append((c.start, c.text[:lead]))
            out.append((c.start + lead, c))
        at = c.end
    merged: list[tuple[int, str | Node]] = []
    for offset, item in out:
        if isinstance(item, str) and merged and isinstance(merged[-1][1], str):
            merged[-1] = (merged[-1][0], merged[-1][1] + item)
        else:
            merged.append((offset, item))
    return merged


def _offset_location(n: Node, offset: int) -> Location:
    line, column = n.script.position(offset)
    return Location(n.script.path, line, column, line, column)


def _quoted_variable(n: Node) -> str | None:
    """NAME when the word is exactly "$NAME" or "${NAME}" (an ordinary variable)."""
    if n.type != "string" or len(n.children) != 3:
        return None
    inner = n.children[1]
    if inner.type == "simple_expansion" and len(inner.children) == 2:
        var = inner.children[1]
    elif inner.type == "expansion" and len(inner.children) == 3:
        var = inner.children[1]
    else:
        return None
    if var.type != "variable_name" or var.text.isdigit():
        return None
    return var.text


def known_prefix(pieces: list[Piece]) -> str:
    """The text of the leading pieces up to the first unknown one."""
    out = []
    for p in pieces:
        if p.text is None:
            if p.origin is not None:
                out.append(p.origin.known_prefix)  # the known start of the unknown value
            break
        out.append(p.text)
    return "".join(out)


def parts_of(pieces: list[Piece], fallback: Location) -> tuple[Value, ...]:
    """The known and unknown parts of a text with unknown pieces (see ``Value.parts``); () if one part."""
    out: list[Value] = []
    for p in pieces:
        if p.text == "" and p.origin is None:
            continue
        o = p.origin
        if p.text is None:
            unknown = o if o is not None else Value(None, fallback)
            out.extend(unknown.parts or (unknown,))
        elif o is not None and o.text == p.text:
            out.append(o)
        else:
            where = o.location if o is not None else p.where or fallback
            lines = line_locations([p], where) if "\n" in p.text else ()
            out.append(Value(p.text, where, o.conditional if o is not None else False, lines=lines))
    return tuple(out) if len(out) > 1 else ()


def significant(pieces: list[Piece]) -> list[Piece]:
    """Pieces that carry text or a source (the empty piece an opening quote adds does not)."""
    return [p for p in pieces if p.origin is not None or p.text != ""]


def _trim(text: str, pattern: str, op: str) -> str:
    regex = re.compile(glob_to_regex(pattern), re.S)
    if op in ("#", "##"):
        ends = range(len(text) + 1) if op == "#" else range(len(text), -1, -1)
        for e in ends:
            if regex.fullmatch(text[:e]):
                return text[e:]
        return text
    starts = range(len(text), -1, -1) if op == "%" else range(len(text) + 1)
    for s in starts:
        if regex.fullmatch(text[s:]):
            return text[:s]
    return text
