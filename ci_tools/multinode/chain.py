"""Following a recipe through the scripts it starts: ``bash x.sh``, ``sbatch job.slurm``, ``bash -c "$CMD"``.

The AMD disaggregated recipes never start a server themselves: the recipe
runs ``submit.sh``, which ``sbatch``-es ``job.slurm``, which starts one
container per node running ``server.sh``, which sources
``server_sglang.sh`` (or ``server_atom.sh``), which builds each role's
command line in a string and runs it with ``bash -c``.  This interpreter
is the recipe interpreter plus the steps that chain needs:

- ``bash|sh FILE ARGS`` (also after ``exec``/``setsid``), and ``sbatch
  [options] FILE``: FILE (relative to the tracked ``cd`` directory) runs as
  a child with the exported variables and ARGS as ``$1...``;
- ``bash -c STRING`` and ``eval STRING``: STRING is parsed and run (in a
  subshell for ``bash -c``, in place for ``eval``);
- command substitutions are evaluated: their stdout (``echo``, ``printf``,
  functions that echo, ``seq``, ``dirname``/``basename``, and pipelines
  through ``tr``, ``sort -n``, ``head``/``tail`` and ``sed s///``)
  becomes the value; any other output is unknown;
- ``eval "$(python3 -c PROGRAM)"`` uses :mod:`.py_snippet`;
- a container step (:class:`ContainerStep`) is called after each child
  script, so the caller can start the node's server script with the
  container's environment.

``GITHUB_WORKSPACE`` is :data:`WORKSPACE`, which (like every container
mount given) maps to the repository root, so that paths built from it name
repository files; ``cd`` is tracked for relative paths.  Values written inside a string that is run
later (``bash -c "$CMD"``) are attributed to the line that built the
string.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from typing import Protocol, cast

from ..config import ProjectConfig
from ..findings import Location
from ..recipes.effects import may_launch
from ..recipes.expand import Field, ShellExit
from ..recipes.interp import Interpreter
from ..recipes.model import Value
from ..recipes.parse import Node, parse_script
from ..snapshot import Snapshot
from ..recipes.conditions import Tri
from .py_snippet import SnippetError, model_snippet

_PASS = object()
# Where the launchers' checkout is (GITHUB_WORKSPACE); paths under it are repository paths.
WORKSPACE = "/github/workspace"
_MAX_CHILD_DEPTH = 8
_STRING_PREFIX = "<string run at "
# Builtins that print nothing: inside a command substitution they leave its output known.
_SILENT = frozenset({"local", "export", "declare", "typeset", "readonly", "set", "unset", "shift", "return", "exit",
                     "true", "false", ":", "test", "[", "read", "source", ".", "pwd", "seq", "dirname", "basename",
                     "shopt", "trap", "wait", "sleep", "let"})
# Brackets an unknown part of a command string (a character no script writes).
_UNKNOWN = "\x01"


def known_or_unknown(value: Value) -> Value:
    """``value`` with a marked unknown part turned back into an unknown value."""
    text = value.text
    if text is None or _UNKNOWN not in text:
        return value
    inner = re.findall(f"{_UNKNOWN}(.*?){_UNKNOWN}", text)
    return dataclasses.replace(value, text=None, expression="unknown: " + (" ".join(inner) or value.expression))


class ContainerStep(Protocol):
    def __call__(self, interp: ChainInterpreter, script: str) -> None: ...


def _stdout_redirected(n: Node) -> bool:
    for c in n.children:
        if c.type == "file_redirect":
            text = c.text.lstrip()
            if text.startswith(("2>", "2>>")) and not text.startswith("2>&1"):
                continue
            if text.startswith(("<", "0<")):
                continue
            return True
        if c.type in ("heredoc_redirect", "herestring_redirect"):
            continue
    return False


class ChainInterpreter(Interpreter):
    def __init__(self, recipe_path: str, config: ProjectConfig, snapshot: Snapshot,
                 container: ContainerStep | None = None, mounts: dict[str, str] | None = None) -> None:
        super().__init__(recipe_path, config, snapshot)
        self.captures: list[list[str | None]] = []
        # The launchers run from the checkout's root; None once a `cd` goes somewhere unknown.
        self.cwd: str | None = ""
        self.depth = 0
        self.container = container
        # Container paths that are repository directories ("/workspace" -> "").
        self.mounts: dict[str, str] = {WORKSPACE: "", **(mounts or {})}
        self.string_count = 0
        # $0 as the script was invoked (``./submit.sh``), which ``dirname "$0"`` relies on.
        self.invoked_as = recipe_path

    def scalar(self, name: str, node: Node) -> Value | None:
        if name == "0":
            return Value(self.invoked_as, node.location(), expression="$0")
        return super().scalar(name, node)

    # -- paths -------------------------------------------------------------------------------
    def repo_path(self, text: str | None) -> str | None:
        """A path as the repository names it, or None when it is outside (or unknown)."""
        if not text:
            return None
        for mount, here in sorted(self.mounts.items(), key=lambda kv: -len(kv[0])):
            if text == mount or text.startswith(mount.rstrip("/") + "/"):
                text = posixpath.join(here, text[len(mount):].lstrip("/")) if here else text[len(mount):].lstrip("/")
                break
        else:
            if text.startswith("/") or self.cwd is None:
                return None
            text = posixpath.join(self.cwd, text)
        path = posixpath.normpath(text)
        return None if path.startswith("..") or path == "." else path

    def read_repo(self, text: str) -> bytes | None:
        path = self.repo_path(text)
        return self.snapshot.read(path) if path is not None else None

    def repo_file(self, text: str) -> tuple[str, bytes] | None:
        """A file named as the script names it: its repository path and bytes."""
        path = self.repo_path(text)
        data = self.snapshot.read(path) if path is not None else None
        return (path, data) if path is not None and data is not None else None

    def _resolve_source(self, n: Node, field: Field, value: Value) -> str | None:
        path = self.repo_path(value.text)
        if path is not None and self.snapshot.read(path) is not None:
            return path
        return super()._resolve_source(n, field, value)

    # -- command strings with unknown parts ------------------------------------------------------
    def scalar_value(self, node: Node, location: Location, expression: str) -> Value:
        """A command string (one that spells a server launch) keeps its known words when a part is unknown.

        Each unknown part becomes a marker, so the string can still be run
        (``bash -c "$PREFILL_CMD"``); a word holding a marker is unknown
        again wherever it ends up (:func:`known_or_unknown`).
        """
        value = super().scalar_value(node, location, expression)
        if value.text is not None or not may_launch(node.text, self.patterns):
            return value
        _, pieces = self.scalar_text(node)
        parts = []
        for p in pieces:
            if p.text is None:
                # the marker names what is unknown, in characters bash gives no meaning
                shown = re.sub(r"\W+", "_", (p.origin.expression if p.origin is not None else "") or "unknown")
                parts.append(f"{_UNKNOWN}{shown.strip('_') or 'unknown'}{_UNKNOWN}")
            else:
                parts.append(p.text)
        text = "".join(parts)
        return Value(text, location, value.conditional, expression)

    # -- statements ----------------------------------------------------------------------------
    def stmt(self, n: Node) -> Tri:
        t = n.type
        if t == "command":
            handled = self._chain_command(n)
            if handled is not _PASS:
                return handled  # type: ignore[return-value]
        elif t == "redirected_statement" and self.captures and _stdout_redirected(n):
            saved, self.captures = self.captures, []
            try:
                return super().stmt(n)
            finally:
                self.captures = saved
        elif t == "pipeline" and self.captures:
            return self._captured_pipeline(n)
        return super().stmt(n)

    def _chain_command(self, n: Node) -> object:
        if n.memo is None:
            n.memo = self._command_shape(n)
        shape = cast("tuple[list[Node], list[Node], str | None, list[Node]]", n.memo)
        prefix, words, _, standalone = shape
        if not words:
            return _PASS
        first = words[0].text
        capturing = bool(self.captures)
        if first in ("echo", "printf"):
            if not capturing:
                return _PASS
            for a in standalone:
                self.assign(a)
            argv = self.argv(words)
            self.captures[-1].append(_echo(argv) if first == "echo" else _printf(argv))
            return True
        if first == "cd":
            argv = self.argv(words)
            target = argv[1][1].text if len(argv) > 1 else None
            self.cwd = self.repo_path(target) if target is not None else None
            return True
        if first == "eval":
            for a in standalone:
                self.assign(a)
            return self._eval(n, self.argv(words))
        if first in ("bash", "sh", "exec", "setsid", "sbatch", "nohup") or first.startswith(("$", '"$')):
            for a in standalone:
                self.assign(a)
            argv = self.argv(words)
            launched = self._launch(n, argv)
            if launched is not _PASS:
                return launched
            return self._maybe_server(n, argv, list(prefix))
        if capturing:
            if first in self.state.functions:
                for a in standalone:
                    self.assign(a)
                argv = self.argv(words)
                body = self.state.functions[first]
                if isinstance(body, Node):
                    return self._run_call(body, first, [v for _, v in argv[1:]])
            if first in ("seq", "dirname", "basename"):
                argv = self.argv(words)
                self.captures[-1].append(_pure(first, [v.text for _, v in argv[1:]]))
                return True
            if first not in _SILENT and first not in self.state.functions:
                self.captures[-1].append(None)  # an external command: what it prints is unknown
                return _PASS
            if first == "pwd":
                here = f"{WORKSPACE}/{self.cwd}" if self.cwd else WORKSPACE if self.cwd == "" else None
                self.captures[-1].append(f"{here}\n" if here is not None else None)
                return True
        return _PASS

    # -- eval, bash -c, child scripts --------------------------------------------------------
    def _eval(self, n: Node, argv: list[tuple[Field, Value]]) -> Tri:
        texts = [v.text for _, v in argv[1:]]
        if any(t is None for t in texts):
            return None
        return self.run_string(" ".join(t for t in texts if t is not None), n, argv[1][1] if len(argv) > 1 else None,
                               subshell=False)

    def run_string(self, text: str, n: Node, origin: Value | None, *, subshell: bool) -> Tri:
        """Parse ``text`` as bash and run it; its words are attributed to the line that built it."""
        self.string_count += 1
        where = origin.location if origin is not None else n.location()
        label = f"{_STRING_PREFIX}{n.script.path}:{n.line}>"
        script = parse_script(label, text.encode())
        if script.problems:
            self.errors.append(f"{n.script.path}:{n.line}: the string run here is not valid bash; what it runs is unknown")
            return None
        servers_before = len(self.state.servers)

        def run() -> Tri:
            return self.block(script.root.children)

        status = self.subshell(run) if subshell else run()
        self._attribute(servers_before, label, where)
        return status

    def _attribute(self, start: int, label: str, where: Location) -> None:
        """Servers found in a run string: their words point at the line that built the string."""
        from ..recipes.state import Server

        fixed = []
        for s in self.state.servers[start:]:
            flags = tuple(dataclasses.replace(
                f, location=_moved(f.location, label, where),
                value=known_or_unknown(dataclasses.replace(f.value, location=_moved(f.value.location, label, where)))
                if f.value is not None else None) for f in s.flags)
            fixed.append(Server(flags, _moved(s.location, label, where), s.argv))
        self.state.servers[start:] = fixed

    def _launch(self, n: Node, argv: list[tuple[Field, Value]]) -> object:
        values = [v for _, v in argv]
        texts = [v.text for v in values]
        i = 0
        replaces = False
        while i < len(texts) and texts[i] in ("exec", "setsid", "nohup"):
            replaces = replaces or texts[i] == "exec"
            i += 1
        if i >= len(texts):
            return _PASS
        head = texts[i]
        if head is not None and posixpath.basename(head) in ("bash", "sh"):
            j = i + 1
            while j < len(texts) and (texts[j] or "").startswith("-") and "c" not in (texts[j] or "")[1:]:
                j += 1
            if j < len(texts) and (texts[j] or "").startswith("-") and "c" in (texts[j] or ""):
                if j + 1 < len(texts) and texts[j + 1] is not None:
                    return self.run_string(texts[j + 1] or "", n, values[j + 1], subshell=True)
                return None
            if j < len(texts):
                status = self.child(n, texts[j], values[j + 1:])
                if replaces:
                    raise ShellExit("", n)
                return status
            return _PASS
        if head == "sbatch":
            for k in range(i + 1, len(texts)):
                t = texts[k]
                if t is not None and not t.startswith("-") and self.read_repo(t) is not None:
                    return self.child(n, t, values[k + 1:])
            self.errors.append(f"{n.script.path}:{n.line}: sbatch runs a script this evaluation cannot find")
            return None
        return _PASS

    def child(self, n: Node, path_text: str | None, args: list[Value]) -> Tri:
        path = self.repo_path(path_text)
        data = self.snapshot.read(path) if path is not None else None
        if path is None or data is None:
            self.errors.append(f"{n.script.path}:{n.line}: runs {path_text or 'an unknown script'}, "
                               "which is not a file of this repository; what it does is unknown")
            return None
        if self.depth >= _MAX_CHILD_DEPTH:
            self.errors.append(f"{n.script.path}:{n.line}: scripts nest deeper than {_MAX_CHILD_DEPTH}")
            return None
        script = parse_script(path, data)
        self._problems(script)

        def run() -> Tri:
            state = self.state
            state.vars = {k: v for k, v in state.vars.items() if k in state.exported}
            state.functions = {}
            state.positional = tuple(args)
            saved_path, saved_cwd, saved_invoked = self.recipe_path, self.cwd, self.invoked_as
            self.recipe_path, self.invoked_as = path, path_text or path
            self.depth += 1
            try:
                try:
                    return self.block(script.root.children)
                except ShellExit as exc:
                    if exc.code not in ("", "0"):
                        return False
                    return None
            finally:
                if self.container is not None:
                    self.container(self, path)
                self.depth -= 1
                self.recipe_path, self.cwd, self.invoked_as = saved_path, saved_cwd, saved_invoked

        return self.subshell(run)

    # -- command substitution ----------------------------------------------------------------
    def command_output(self, n: Node) -> Value:
        """``$(...)``: what the chain's own capture of the subshell gives (unknown when any part is)."""
        found = self._substitute(n)
        return found if found is not None else Value(None, n.location(), False, n.text)

    def _substitute(self, n: Node) -> Value | None:
        inner = [c for c in n.children if c.named]
        if len(inner) == 1 and inner[0].type == "command":
            snippet = self._python_snippet(inner[0])
            if snippet is not None:
                return snippet
        self.captures.append([])
        try:
            self.subshell(lambda: self.block(inner))
        finally:
            out = self.captures.pop()
        if any(c is None for c in out):
            return None
        text = "".join(c for c in out if c is not None).rstrip("\n")
        return Value(text, n.location(), expression=n.text)

    def _captured_pipeline(self, n: Node) -> Tri:
        parts = [c for c in n.children if c.named]
        self.captures.append([])
        try:
            self.subshell(lambda: self.stmt(parts[0]))
        finally:
            out = self.captures.pop()
        text: str | None = None if any(c is None for c in out) else "".join(c for c in out if c is not None)
        for p in parts[1:]:
            words: list[str | None] = []
            if p.type == "command":
                if p.memo is None:
                    p.memo = self._command_shape(p)
                shape = cast("tuple[list[Node], list[Node], str | None, list[Node]]", p.memo)
                words = [v.text for _, v in self.argv(shape[1])]
            text = _filter(words, text) if words and all(w is not None for w in words) else None
        self.captures[-1].append(text)
        return None

    # -- the models.yaml program ---------------------------------------------------------------
    def _python_snippet(self, command: Node) -> Value | None:
        words = [c for c in command.children if c.named and c.type not in ("file_redirect",)]
        if len(words) != 3 or words[0].text not in ("python3", "python") or words[1].text != "-c":
            return None
        argv = self.argv(words)
        program = argv[2][1].text if len(argv) == 3 else None
        if program is None or "safe_load" not in program:
            return None
        env = {k: v.text for k, v in self.state.vars.items()
               if k in self.state.exported and isinstance(v, Value) and v.text is not None}
        try:
            assignments = model_snippet(program, self.repo_file, env, command.location())
        except SnippetError as exc:
            self.errors.append(f"{command.script.path}:{command.line}: the python3 -c program is not modelled "
                               f"({exc}); what it prints is unknown")
            return None
        # What eval then runs: the assignments, kept with their YAML positions.
        for a in assignments:
            self.state.vars[a.name] = a.value
        return Value("", command.location(), expression="python3 -c output (assignments applied)")


def _moved(loc: Location, label: str, where: Location) -> Location:
    if loc.path == label:
        return dataclasses.replace(where, note="in the command string built here")
    return loc


def _echo(argv: list[tuple[Field, Value]]) -> str | None:
    words = [v.text for _, v in argv[1:]]
    newline = True
    while words and words[0] in ("-n", "-e", "-ne", "-en", "-E"):
        newline = newline and "n" not in (words[0] or "")
        words = words[1:]
    if any(w is None for w in words):
        return None
    return " ".join(w for w in words if w is not None) + ("\n" if newline else "")


def _printf(argv: list[tuple[Field, Value]]) -> str | None:
    words = [v.text for _, v in argv[1:]]
    if not words or any(w is None for w in words):
        return None
    fmt, args = words[0] or "", [w or "" for w in words[1:]]
    if re.search(r"%[^s%]", fmt):
        return None
    fmt = fmt.replace("\\n", "\n").replace("\\t", "\t")
    count = fmt.count("%s")
    if count == 0:
        return fmt.replace("%%", "%")
    out = []
    chunks = [args[i:i + count] for i in range(0, max(len(args), 1), count)] or [[]]
    for chunk in chunks:
        it = iter(chunk + [""] * (count - len(chunk)))
        out.append(re.sub(r"%s", lambda _m: next(it), fmt).replace("%%", "%"))
    return "".join(out)


def _pure(name: str, args: list[str | None]) -> str | None:
    if any(a is None for a in args):
        return None
    words = [a for a in args if a is not None]
    if name == "seq" and 1 <= len(words) <= 2 and all(re.fullmatch(r"-?\d+", w) for w in words):
        start, end = (1, int(words[0])) if len(words) == 1 else (int(words[0]), int(words[1]))
        return "".join(f"{i}\n" for i in range(start, end + 1))
    if name == "dirname" and len(words) == 1:
        return (posixpath.dirname(words[0].rstrip("/")) or ".") + "\n"
    if name == "basename" and words:
        base = posixpath.basename(words[0].rstrip("/"))
        return (base[: -len(words[1])] if len(words) > 1 and base.endswith(words[1]) else base) + "\n"
    return None


def _filter(words: list[str | None], text: str | None) -> str | None:
    """One pipeline stage over known text: tr, sort -n, head/tail, sed s///; else unknown."""
    if text is None:
        return None
    name, args = words[0], [w or "" for w in words[1:]]
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines = lines[:-1]
    if name == "tr" and len(args) == 2:
        a, b = (s.replace("\\n", "\n") for s in args)
        if len(a) == len(b):
            return text.translate(str.maketrans(a, b))
        return None
    if name == "sort" and args in (["-n"], ["-g"]):
        try:
            return "".join(f"{v}\n" for v in sorted(lines, key=float))
        except ValueError:
            return None
    if name in ("head", "tail"):
        count = _line_count(args)
        if count is None:
            return None
        chosen = lines[:count] if name == "head" else lines[-count:] if count else []
        return "".join(f"{v}\n" for v in chosen)
    if name == "sed":
        extended = "-E" in args or "-r" in args
        scripts = [a for a in args if not a.startswith("-")]
        if len(scripts) == 1:
            return _sed(scripts[0], text, extended)
    return None


def _line_count(args: list[str]) -> int | None:
    if args == []:
        return 10
    if len(args) == 1 and re.fullmatch(r"-\d+", args[0]):
        return int(args[0][1:])
    if len(args) == 2 and args[0] == "-n" and args[1].isdigit():
        return int(args[1])
    return None


def _sed(script: str, text: str, extended: bool) -> str | None:
    m = re.fullmatch(r"s(.)(.*?)\1(.*?)\1(g?)", script)
    if m is None:
        return None
    pattern, repl, flags = m.group(2), m.group(3), m.group(4)
    if not extended:
        pattern = pattern.replace(r"\(", "(").replace(r"\)", ")").replace(r"\+", "+").replace(r"\?", "?")
    pattern = pattern.replace("[[:space:]]", r"\s")
    try:
        rx = re.compile(pattern)
    except re.error:
        return None
    repl = re.sub(r"\\(\d)", r"\\g<\1>", repl).replace("&", r"\g<0>")
    return "\n".join(rx.sub(repl, line, count=0 if flags else 1) for line in text.split("\n"))
