"""Standard output and input while a recipe is evaluated.

Values reach the server through what commands print: ``X=$(printf ...)``,
``$(cat <<EOF ... EOF)``, ``cat > config.yml <<EOF`` and a flag naming the
file, ``$(seq 1 8)``.  The interpreter therefore keeps a *sink*: where the
standard output of the command being evaluated goes.  Outside ``$(...)``
and file redirections there is none, and nothing is computed (the common,
cheap case).  Inside one, every command adds what it prints: a modelled
command (:mod:`.commands`) its computed text, a here-document its lines
with their source positions, anything else an unknown piece, so the result
is unknown rather than guessed.  Files written with ``>``/``>>`` are kept
in the state by path; a path unknown until run time is identified by the
variable binding it came from, so ``cat > "$F"`` and a later ``--config
"$F"`` still meet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from . import commands
from .conditions import Tri
from .expand import Expander, Field, Piece, known_prefix, line_locations, parts_of
from .model import Value
from .parse import Node

_STDOUT_WRITE = {">", ">>", ">|", "&>", "&>>"}
# Stand-ins for unknown arguments while a printf format is applied (private-use characters).
_HOLE, _HOLE_END = "\ue000", "\ue001"
_SUBSTITUTION_MAX_DEPTH = 8


def file_key(path: Value) -> str:
    """The key of a file the recipe writes: its path, or the binding that holds an unknown path."""
    if path.text is not None:
        return path.text
    loc = path.location
    return f"\0{loc.path}:{loc.line}:{loc.column}\0{path.expression}"


@dataclass(frozen=True)
class Redirects:
    """What a statement's redirections do to its standard output and input (derived once per node)."""

    body: Node | None
    stdout_file: Node | None = None  # the target word of `> FILE` / `>> FILE`
    append: bool = False
    stdout_discarded: bool = False  # `>/dev/null`, `>&2`
    stdin_file: Node | None = None  # `< FILE`
    heredoc: Node | None = None  # the heredoc_redirect node
    herestring: Node | None = None
    # A here-document whose command feeds a pipeline (`cat <<EOF | sort`): not modelled.
    opaque: bool = False

    @property
    def trivial(self) -> bool:
        return (self.stdout_file is None and not self.stdout_discarded and self.stdin_file is None
                and self.heredoc is None and self.herestring is None)


def redirects_of(n: Node) -> Redirects:
    body = None
    fields: dict[str, object] = {}
    for c in n.children:
        if c.type == "file_redirect":
            _file_redirect(c, fields)
        elif c.type == "heredoc_redirect":
            fields["heredoc"] = c
            for inner in c.children:
                if inner.type == "file_redirect":
                    _file_redirect(inner, fields)
                elif inner.type in ("pipeline", "list", "command"):
                    fields["opaque"] = True
        elif c.type == "herestring_redirect":
            fields["herestring"] = c
        elif c.named and c.type != "comment" and body is None:
            body = c
    return Redirects(body, **fields)  # type: ignore[arg-type]


def _file_redirect(c: Node, fields: dict[str, object]) -> None:
    fd_node = c.child_of_type("file_descriptor")
    fd = fd_node.text if fd_node is not None else None
    op = next((k.type for k in c.children if not k.named), "")
    target = next((k for k in reversed(c.children) if k.named and k.type != "file_descriptor"), None)
    if target is None:
        return
    if op in _STDOUT_WRITE and (fd in (None, "1") or op.startswith("&")):
        if target.text == "/dev/null":
            fields["stdout_discarded"], fields["stdout_file"] = True, None
        else:
            fields["stdout_file"], fields["append"], fields["stdout_discarded"] = target, op in (">>", "&>>"), False
    elif op == ">&" and fd in (None, "1") and target.text == "2":
        fields["stdout_discarded"], fields["stdout_file"] = True, None
    elif op == "<" and fd in (None, "0"):
        fields["stdin_file"] = target


class Streams(Expander):
    """The output/input side of the interpreter (mixed into it)."""

    # Where standard output goes now: pieces of text (None: nowhere that matters).
    sink: list[Piece] | None = None
    # Standard input of the command being evaluated: None when it is not known.
    stdin: Value | None = None
    substitution_depth = 0

    # Provided by the interpreter.
    def stmt(self, n: Node) -> Tri:
        raise NotImplementedError

    def block(self, nodes: tuple[Node, ...] | list[Node]) -> Tri:
        raise NotImplementedError

    def subshell(self, run: Callable[[], Tri]) -> Tri:
        raise NotImplementedError

    def is_function(self, name: str) -> bool:
        raise NotImplementedError

    # -- $(...) ----------------------------------------------------------------------------------
    def command_output(self, n: Node) -> Value:
        text = n.text
        if text.startswith("$((") and text.endswith("))"):
            # tree-sitter reads $((...)) as $( (...) ) in some places (here-documents, ${X:-$((...))}).
            from .arith import evaluate_arith_text

            result = evaluate_arith_text(self, text[3:-2], n)
            return Value(None if result is None else str(result), n.location(), False, text)
        unknown = Value(None, n.location(), False, n.text)
        if self.substitution_depth >= _SUBSTITUTION_MAX_DEPTH or not self._computable(n):
            return unknown
        inner = [c for c in n.children if c.named]
        sink: list[Piece] = []
        saved = self.sink, self.stdin
        self.sink, self.stdin = sink, None
        self.substitution_depth += 1
        try:
            self.subshell(lambda: self.block(inner))
        finally:
            self.sink, self.stdin = saved
            self.substitution_depth -= 1
        value = joined_output(sink, n)
        if value.text is None:
            parts = value.parts
            last = parts[-1] if parts else None
            if last is not None and last.text is not None:
                # $(...) drops the trailing newlines of what it captured.
                parts = parts[:-1] + (Value(last.text.rstrip("\n"), last.location, last.conditional, last.expression,
                                            lines=last.lines),)
            return Value(None, value.location, value.conditional, n.text, known_prefix=value.known_prefix, parts=parts)
        # $(...) drops the trailing newlines of what it captured.
        text = value.text.rstrip("\n")
        lines = value.lines[: text.count("\n") + 1] if value.lines else ()
        return Value(text, value.location, value.conditional, n.text, lines=lines if "\n" in text else ())

    def _computable(self, n: Node) -> bool:
        """Whether every command inside is modelled, a builtin or a function (else the output is unknown)."""
        return self._computable_parts([n])

    def _computable_parts(self, nodes: list[Node]) -> bool:
        for n in nodes:
            hit = _NAMES.get(id(n))
            if hit is None or hit[0] is not n:
                hit = _NAMES[id(n)] = (n, _command_names(n))
            names = hit[1]
            if names is None or not all(name in commands.MODELLED or name in _SHELL_WORDS or self.is_function(name)
                                        for name in names):
                return False
        return True

    # -- output ------------------------------------------------------------------------------------
    def emit(self, text: str | None, n: Node, origin: Value | None = None) -> None:
        if self.sink is None:
            return
        if origin is None or origin.text != text:
            origin = Value(text, n.location(), False, n.text)
        self.sink.append(Piece(text, origin))

    def print_command(self, n: Node, argv: list[tuple[Field, Value]]) -> Tri:
        """A command run for what it prints: its output goes to the sink (unknown when not modelled)."""
        name = argv[0][1].text
        if name is None:
            self.emit(None, n)
            return None
        if name == "cat":
            return self._cat(n, argv)
        args = [v for _, v in argv[1:]]
        if name == "printf" and len(args) > 1 and args[0].text is not None and any(a.text is None for a in args):
            return self._printf_with_holes(n, args)
        result = commands.run(name, [v.text for v in args], self.stdin.text if self.stdin else None)
        if result is None:
            self.emit(None, n)
            return None
        self.emit(result.output, n)
        return result.status

    def command_status(self, argv: list[tuple[Field, Value]]) -> Tri:
        """The exit status of a modelled command whose output goes nowhere (None when not known)."""
        name = argv[0][1].text
        result = commands.run(name, [v.text for _, v in argv[1:]], None) if name is not None else None
        return None if result is None else result.status

    def _printf_with_holes(self, n: Node, args: list[Value]) -> Tri:
        """``printf FORMAT ARGS`` with unknown arguments: the known text around them is kept as parts."""
        marks = {f"{_HOLE}{i}{_HOLE_END}": a for i, a in enumerate(args) if a.text is None}
        texts = [a.text if a.text is not None else f"{_HOLE}{i}{_HOLE_END}" for i, a in enumerate(args)]
        text = commands.format_printf(texts[0] or "", [t or "" for t in texts[1:]])
        if text is None:
            self.emit(None, n)
            return None
        here = n.location()
        for chunk in re.split(f"({_HOLE}[0-9]+{_HOLE_END})", text):
            if chunk in marks:
                self.sink_piece(Piece(None, marks[chunk]))
            elif chunk:
                self.sink_piece(Piece(chunk, Value(chunk, here, False, n.text)))
        return True

    def sink_piece(self, piece: Piece) -> None:
        if self.sink is not None:
            self.sink.append(piece)

    def _cat(self, n: Node, argv: list[tuple[Field, Value]]) -> Tri:
        files = [v for _, v in argv[1:]]
        if not files or [v.text for v in files] == ["-"]:
            if self.stdin is None:
                self.emit(None, n)
                return None
            self.emit(self.stdin.text, n, self.stdin)
            return True
        for v in files:
            content = self.read_file(file_key(v))
            if content is None or (v.text is not None and v.text.startswith("-")):
                self.emit(None, n)
                return None
            self.emit(content.text, n, content)
        return True

    # -- redirections --------------------------------------------------------------------------------
    def redirected(self, n: Node) -> Tri:
        if n.memo is None:
            n.memo = redirects_of(n)
        r = n.memo
        assert isinstance(r, Redirects)
        if r.body is None:
            return True
        if r.trivial or (self.sink is None and r.stdout_file is None):
            # Nothing this statement prints or reads can reach a value.
            return self.stmt(r.body)
        stdin = self.stdin
        if r.heredoc is not None:
            stdin = self.heredoc_value(r.heredoc)
        elif r.herestring is not None:
            word = next((c for c in r.herestring.children if c.named), None)
            text = self.scalar_text(word)[0] if word is not None else ""
            stdin = Value(None if text is None else text + "\n", r.herestring.location(), False, r.herestring.text)
        elif r.stdin_file is not None:
            stdin = self.read_file(file_key(self._path_value(r.stdin_file)))
        sink: list[Piece] | None = self.sink
        path: Value | None = None
        if r.stdout_discarded:
            sink = None
        elif r.stdout_file is not None:
            path, sink = self._path_value(r.stdout_file), []
        if r.opaque:
            sink, stdin = None, None
        saved = self.sink, self.stdin
        self.sink, self.stdin = sink, stdin
        try:
            return self.stmt(r.body)
        finally:
            self.sink, self.stdin = saved
            if r.opaque and self.sink is not None:
                self.emit(None, n)
            if path is not None and sink is not None:
                self._write(path, sink, n, r.append)

    def _path_value(self, node: Node) -> Value:
        fields = self.argv([node])
        return fields[0][1] if len(fields) == 1 else Value(None, node.location(), False, node.text)

    def _write(self, path: Value, pieces: list[Piece], n: Node, append: bool) -> None:
        key = file_key(path)
        content = joined_output(pieces, n)
        if append:
            before = self.read_file(key)
            if before is None or before.text is None or content.text is None:
                # Appending to a file this recipe did not write (or whose content is unknown).
                content = Value(None, n.location(), False, n.text)
            else:
                lines = line_locations([Piece(before.text, before), Piece(content.text, content)], before.location)
                content = Value(before.text + content.text, before.location,
                                before.conditional or content.conditional, before.expression, lines=lines)
        self.state.files[key] = content

    # -- pipelines -----------------------------------------------------------------------------------
    def piped(self, parts: list[Node]) -> Tri:
        """A pipeline whose output is captured: each part reads what the previous one printed."""
        stdin = self.stdin
        status: Tri = None
        final = self.sink
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            sink: list[Piece] | None = final if last else []
            saved = self.sink, self.stdin
            self.sink, self.stdin = sink, stdin
            try:
                status = self.subshell(lambda part=part: self.stmt(part))  # type: ignore[misc]
            finally:
                self.sink, self.stdin = saved
            if not last:
                assert sink is not None
                stdin = joined_output(sink, part)
        return status


# Words that may name a command inside $(...) without making its output unknown by themselves.
_SHELL_WORDS = frozenset({"test", "[", "local", "export", "declare", "readonly", "set", "shift", "return", "exit",
                          "break", "continue", "unset", "let"})


# Per process, by node (the node is kept with its entry, so an id is never reused while cached).
_NAMES: dict[int, tuple[Node, frozenset[str] | None]] = {}


def _command_names(n: Node) -> frozenset[str] | None:
    """The literal command names inside a node, or None when one is computed (``"$PY" -c ...``)."""
    names: set[str] = set()
    stack = [n]
    while stack:
        c = stack.pop()
        if c.type == "command_substitution" and c is not n:
            # A nested $(...) is judged when it is expanded: an unknown one only leaves a hole.
            continue
        if c.type == "command_name":
            words = [k for k in c.children if k.named]
            if len(words) != 1 or words[0].type != "word":
                return None
            names.add(words[0].text)
        stack.extend(c.children)
    return frozenset(names)


def joined_output(pieces: list[Piece], n: Node) -> Value:
    """The text of captured output pieces as one value (unknown when any piece is)."""
    significant = [p for p in pieces if p.text != ""]
    if len(significant) == 1 and significant[0].origin is not None and significant[0].origin.text is not None:
        return significant[0].origin
    texts = [p.text for p in significant]
    if any(t is None for t in texts):
        return Value(None, n.location(), False, n.text, known_prefix=known_prefix(significant),
                     parts=parts_of(significant, n.location()))
    text = "".join(t for t in texts if t is not None)
    conditional = any(p.origin is not None and p.origin.conditional for p in significant)
    lines = line_locations(significant, n.location()) if "\n" in text.rstrip("\n") else ()
    return Value(text, n.location(), conditional, n.text, lines=lines)
