"""Following a recipe through the scripts it starts: ``bash x.sh``, ``sbatch job.slurm``, ``bash -c "$CMD"``.

The AMD disaggregated recipes never start a server themselves: the recipe
runs ``submit.sh``, which ``sbatch``-es ``job.slurm``, which starts one
container per node running ``server.sh``, which sources
``server_sglang.sh`` (or ``server_atom.sh``), which builds each role's
command line in a string and runs it with ``bash -c``.  This interpreter
is the recipe interpreter plus the steps that chain needs:

- ``bash|sh FILE ARGS`` (also after ``exec``/``setsid``), a script run by
  its path (``/workspace/.../server.sh``), and ``sbatch [options] FILE``:
  FILE (relative to the tracked ``cd`` directory) runs as a child with the
  exported variables and ARGS as ``$1...``;
- ``bash -c STRING`` and ``eval STRING``: STRING is parsed and run (in a
  subshell for ``bash -c``, in place for ``eval``);
- command substitutions are evaluated: their stdout (``echo``, ``printf``,
  functions that echo, ``seq``, ``dirname``/``basename``, and pipelines
  through ``tr``, ``sort -n``, ``head``/``tail`` and ``sed s///``)
  becomes the value; any other output is unknown;
- ``eval "$(python3 -c PROGRAM)"`` and ``eval "$(python3 - <<EOF ...)"`` use
  :mod:`.py_snippet`;
- a repository script named by the known start of a string ``eval`` runs
  (``bash /workspace/.../bench.sh 2 1 ...`` and then a part known only at run
  time), or by the words of a program the chain does not follow (``docker run
  ... bash -lc "... bash trace_replay.sh"``), is noted as named
  (:meth:`~ci_tools.revision.read_log.ReadLog.named`), not run; an ``eval``
  of a string whose program is unknown is an opaque command;
- a container step (:class:`ContainerStep`) is called after each child
  script, so the caller can start the node's server script with the
  container's environment; ``srun`` is handed to an :class:`SrunStep`
  (``srun --container-image``: :mod:`.srun_container`).

``GITHUB_WORKSPACE`` is :data:`WORKSPACE`, which (like every container
mount given) maps to the repository root, so that paths built from it name
repository files; ``cd`` is tracked for relative paths (a ``cd`` inside
``$(...)`` stays there).  File tests (``-f``, ``-e``, ``-s``, ``-d``, ``-r``)
of repository paths are decided by the revision's files.  Values written
inside a string that is run later (``bash -c "$CMD"``) are attributed to the
line that built the string.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from typing import Protocol, cast

from ...config import ProjectConfig
from ...findings import Location
from ...revision.read_log import read_named, read_to_test, unlogged
from ...revision.snapshot import Snapshot
from ...shell.conditions import Tri
from ...shell.effects import may_launch
from ...shell.expand import SCRIPT_NAME, Field, ShellExit
from ...shell.flow import FLOW
from ...shell.interp import Interpreter
from ...shell.model import FlagKey, ServerFlag, Value
from ...shell.parse import Node, Script, parse_script
from ...shell.sed import substitute
from ...shell.server import UNKNOWN_FLAG
from ...shell.state import Server
from ...shell.streams import Redirects, file_key, redirects_of
from .docker_mounts import Mount, MountedFile, string_mounts
from .provenance import Layout, Span, joined, output_spans, printed, written_at
from .py_snippet import Assignment, SnippetError, model_snippet, printed_names

_PASS = object()
# Where the launchers' checkout is (GITHUB_WORKSPACE); paths under it are repository paths.
WORKSPACE = "/github/workspace"
_MAX_CHILD_DEPTH = 8
# A script a command's words name (`bash /workspace/.../bench.sh 2 1`, `bash -lc "cd ... && bash trace_replay.sh"`).
_SCRIPT_WORDS = re.compile(r"[^\s;&|()<>\"'`$]+\.sh(?![\w.-])")
_STRING_PREFIX = "<string run at "
# Builtins that print nothing: inside a command substitution they leave its output known.
_SILENT = frozenset({"local", "export", "declare", "typeset", "readonly", "set", "unset", "shift", "return", "exit",
                     "true", "false", ":", "test", "[", "read", "source", ".", "pwd", "seq", "dirname", "basename",
                     "shopt", "trap", "wait", "sleep", "let"})
# Commands whose output or effect the chain computes (see _chain_command).
_MODELLED = frozenset({"echo", "printf", "cd", "eval", "bash", "sh", "exec", "setsid", "sbatch", "nohup", "seq",
                       "dirname", "basename", "pwd", "python", "python3"})
# Brackets an unknown part of a command string (a character no script writes).
_UNKNOWN = "\x01"
_NOWHERE = Location("", 0)


def at_run_time_if_checkout(value: Value) -> Value:
    """``value`` unknown when it is a path of the checkout: :data:`WORKSPACE` stands in for the runner's
    directory, which a server's environment then holds as the runner names it."""
    text = value.text
    if text is None or not (text == WORKSPACE or text.startswith(WORKSPACE + "/")):
        return value
    return dataclasses.replace(value, text=None, expression=f"{value.expression} (a path of the runner's checkout, "
                                                           "known when the job runs)")


def known_or_unknown(value: Value) -> Value:
    """``value`` with a marked unknown part turned back into an unknown value."""
    text = value.text
    if text is None or _UNKNOWN not in text:
        return value
    inner = re.findall(f"{_UNKNOWN}(.*?){_UNKNOWN}", text)
    return dataclasses.replace(value, text=None, expression="unknown: " + (" ".join(inner) or value.expression))


class ContainerStep(Protocol):
    def __call__(self, interp: ChainInterpreter, script: str) -> None: ...


class SrunStep(Protocol):
    """``srun [options] COMMAND``: True when the step ran it (a container step), else it is not followed."""

    def __call__(self, interp: ChainInterpreter, n: Node, argv: list[Value]) -> bool: ...


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
                 container: ContainerStep | None = None, mounts: dict[str, str] | None = None,
                 srun: SrunStep | None = None, read_only: frozenset[str] = frozenset()) -> None:
        super().__init__(recipe_path, config, snapshot)
        self.srun = srun
        # Mount points of repository directories that nothing writes to (`:ro`): a file absent from the
        # repository is absent there when the job runs.
        self.read_only = read_only
        self.captures: list[list[str | None]] = []
        # The launchers run from the checkout's root; None once a `cd` goes somewhere unknown.
        self.cwd: str | None = ""
        self.depth = 0
        self.container = container
        # Container paths that are repository directories ("/workspace" -> "").
        self.mounts: dict[str, str] = {WORKSPACE: "", **(mounts or {})}
        self.string_count = 0
        # What a modelled Python program printed into a file (by streams.file_key), applied when it is sourced.
        self.program_outputs: dict[str, list[Assignment]] = {}
        # $0 as the script was invoked (``./submit.sh``), which ``dirname "$0"`` relies on.
        self.invoked_as = recipe_path
        # `docker run -v` items of the strings run by `srun bash -c` (docker_mounts), for the container step.
        self.container_mounts: list[Mount] = []
        # In a container: paths mounted from host files, with what the chain wrote there (docker_mounts).
        self.mounted: dict[str, MountedFile] = {}

    def script_name(self, node: Node) -> Value:
        if self.reads is not None:
            self.reads.add(SCRIPT_NAME)
        return Value(self.invoked_as, node.location(), expression="$0")

    def script_identity(self) -> object:
        return self.recipe_path, self.invoked_as

    def memo_context(self) -> tuple[object, ...]:
        # Relative paths and mounted directories decide which files a call reads; inside `$(...)`
        # what a call prints is kept.
        return self.cwd, tuple(sorted(self.mounts.items())), self.read_only, bool(self.captures)

    def output_mark(self) -> object:
        return (len(self.captures), len(self.captures[-1])) if self.captures else None

    def output_since(self, mark: object) -> tuple[object, ...]:
        if not isinstance(mark, tuple) or not self.captures or len(self.captures) != mark[0]:
            return ()
        return tuple(self.captures[-1][mark[1]:])

    def replay_output(self, printed: tuple[object, ...]) -> None:
        if self.captures:
            self.captures[-1].extend(cast("list[str | None]", list(printed)))

    def scalar(self, name: str, node: Node) -> Value | None:
        if name == "0":
            return self.script_name(node)
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

    def directory(self, text: str | None) -> str | None:
        """A directory as the repository names it ("" for its root), or None when outside or unknown."""
        if text is None:
            return None
        found = self.repo_path(text)
        if found is not None:
            return found
        inside = self.repo_path(posixpath.join(text, "x"))  # the root itself: normalised to "."
        return "" if inside == "x" else None

    def file_test(self, op: str, text: str | None) -> bool | None:
        """``[[ -f PATH ]]`` and the like, for a path of the repository: decided by the revision's files.

        A file the revision holds (or the script wrote) exists; one it lacks is absent only under a
        read-only mount (anywhere else a command not followed here could create it).
        """
        if op not in ("-e", "-f", "-s", "-r", "-d") or text is None:
            return None
        mounted = self.mounted.get(text)
        if mounted is not None:
            # a file the chain wrote exists; for a host path it did not write, docker creates a directory
            content = mounted.content
            if content is None:
                return None
            if op == "-s":
                return None if content.text is None else bool(content.text)
            return op != "-d"
        path = self.repo_path(text)
        if path is None:
            return None
        data = read_to_test(self.snapshot, path)
        if data is None and file_key(Value(text, _NOWHERE)) in self.state.files:
            return op != "-d" if op != "-s" else None
        if data is not None:
            return op != "-d" and (op != "-s" or len(data) > 0)
        is_dir = any(f.startswith(path + "/") for f in self.snapshot.files())
        if is_dir:
            return op in ("-e", "-d", "-r")
        inside = any(text == m or text.startswith(m.rstrip("/") + "/") for m in self.read_only)
        return False if inside else None

    def read_repo(self, text: str) -> bytes | None:
        path = self.repo_path(text)
        return self.snapshot.read(path) if path is not None else None

    def repo_file(self, text: str) -> tuple[str, bytes] | None:
        """A file named as the script names it: its repository path and bytes."""
        path = self.repo_path(text)
        data = self.snapshot.read(path) if path is not None else None
        return (path, data) if path is not None and data is not None else None

    def _source_printed(self, argv: list[tuple[Field, Value]]) -> object:
        """``source "$tmp"`` of what a modelled program printed: its assignments, with their YAML lines."""
        printed = self.program_outputs.get(file_key(argv[1][1])) if len(argv) > 1 else None
        if printed is None:
            return _PASS
        self.external_effects += 1  # read from the interpreter, not the state: a call doing this is not reused
        for a in printed:
            self.state.vars[a.name] = a.value
        return True

    def _note_mounts(self, words: list[Node], argv: list[tuple[Field, Value]]) -> None:
        """``srun ... bash -c "... docker run -v HOST:CONTAINER ..."``: the mounts, kept for the container step."""
        texts = [v.text for _, v in argv]
        if len(texts) != len(words):
            return  # a word split into several: which node holds the string is not known
        for i in range(1, len(texts) - 1):
            shell = posixpath.basename(texts[i] or "") in ("bash", "sh")
            if shell and re.fullmatch(r"-[a-z]*c[a-z]*", texts[i + 1] or ""):
                if i + 2 < len(words):
                    self.external_effects += 1  # kept by the interpreter, not the state: a call doing this is not reused
                    self.container_mounts.extend(string_mounts(words[i + 2], self.argv))
                return

    def _source_mounted(self, n: Node, argv: list[tuple[Field, Value]]) -> object:
        """``source /config/x.env`` of a path mounted from a file the chain wrote: its content runs here, each
        value pointing at the line that wrote it (under ``set -a`` every name it assigns is exported)."""
        mounted = self.mounted.get(argv[1][1].text or "") if len(argv) > 1 else None
        if mounted is None:
            return _PASS
        self.external_effects += 1  # read from the interpreter, not the state: a call doing this is not reused
        content = mounted.content
        text = _marked(content) if content is not None else None
        if content is None or text is None:
            why = mounted.reason or "what the chain wrote there is not known: " + (content.expression if content else "")
            self.errors.append(f"{n.script.path}:{n.line}: cannot resolve `{n.text}`: {why}; what it defines is unknown")
            return None
        label = f"<file written at {content.location.path}:{content.location.line}>"
        script = parse_script(label, text.encode())
        if script.problems:
            self.errors.append(f"{n.script.path}:{n.line}: {argv[1][1].text}, written at {content.location.path}:"
                               f"{content.location.line}, {_unreadable(script)}; what it defines is unknown")
            return None
        places = _line_places(content)
        before = dict(self.state.vars)
        status = self.block(script.root.children)
        for name, value in list(self.state.vars.items()):
            if before.get(name) is value or not isinstance(value, Value):
                continue
            if value.location.path == label:
                at = places[value.location.line - 1] if 0 < value.location.line <= len(places) else content.location
                value = dataclasses.replace(value, location=at, spans=(), lines=())
                self.state.vars[name] = known_or_unknown(value)
            if self.allexport:
                self.state.exported.add(name)
        return status

    def _resolve_source(self, n: Node, field: Field, value: Value) -> str | None:
        path = self.repo_path(value.text)
        if path is not None and self.snapshot.read(path) is not None:
            return path
        return super()._resolve_source(n, field, value)

    # -- command strings with unknown parts ------------------------------------------------------
    def scalar_value(self, node: Node, location: Location, expression: str) -> Value:
        """A word's value, remembering where its parts were written (:mod:`.provenance`).

        A command string (one that spells a server launch) keeps its known
        words when a part is unknown: each unknown part becomes a marker, so
        the string can still be run (``bash -c "$PREFILL_CMD"``); a word
        holding a marker is unknown again wherever it ends up
        (:func:`known_or_unknown`).
        """
        text, pieces = self.scalar_text(node)
        if text is not None:
            # literal text was written here, the rest where its variable was set
            spans = joined((p.text or "", p.origin if p.origin is not None else location) for p in pieces) \
                if any(p.origin is not None for p in pieces) else ()
            return self.scalar_of(text, pieces, location, expression, spans)
        value = self.scalar_of(text, pieces, location, expression)
        if not may_launch(node.text, self.patterns):
            return value
        parts: list[tuple[str, Value | Location]] = []
        for p in pieces:
            # a value built of known and unknown pieces (`ARGS="$ARGS --prefill http://${IP[$i]}:8000"`)
            # keeps its known words: only its unknown pieces are marked
            if p.text is None and p.origin is not None and p.origin.parts:
                parts.extend(_marked_parts(p.origin))
            elif p.text is None:
                # the marker names what is unknown, in characters bash gives no meaning
                shown = re.sub(r"\W+", "_", (p.origin.expression if p.origin is not None else "") or "unknown")
                parts.append((f"{_UNKNOWN}{shown.strip('_') or 'unknown'}{_UNKNOWN}", location))
            else:
                parts.append((p.text, p.origin if p.origin is not None else location))
        return Value("".join(t for t, _ in parts), location, value.conditional, expression, spans=joined(parts))

    def field_value(self, f: Field, node: Node) -> Value:
        value = super().field_value(f, node)
        if value.text is not None and len(f.pieces) > 1 and any(p.origin is not None for p in f.pieces):
            spans = joined((p.text or "", p.origin if p.origin is not None else value.location) for p in f.pieces)
            if spans:
                return dataclasses.replace(value, spans=spans)
        return value

    # -- statements ----------------------------------------------------------------------------
    def stmt(self, n: Node) -> Tri:
        t = n.type
        if t == "command":
            handled = self._chain_command(n)
            if handled is not _PASS:
                return handled  # type: ignore[return-value]
        elif t == "redirected_statement" and (program := _heredoc_program(n)) is not None:
            return self._heredoc_program(n, *program)
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
            self.captures[-1].append(self._echoed(argv) if first == "echo" else self._formatted(argv))
            return True
        if first == "cd":
            argv = self.argv(words)
            target = argv[1][1].text if len(argv) > 1 else None
            self.cwd = self.directory(target)
            return True
        if first == "eval":
            for a in standalone:
                self.assign(a)
            return self._eval(n, self.argv(words))
        if first in ("source", ".") and self.program_outputs:
            done = self._source_printed(self.argv(words))
            if done is not _PASS:
                return done
        if first in ("source", ".") and self.mounted:
            done = self._source_mounted(n, self.argv(words))
            if done is not _PASS:
                return done
        if first == "srun":
            srun_argv = self.argv(words)
            if self.srun is not None and self.srun(self, n, [v for _, v in srun_argv]):
                for a in standalone:
                    self.assign(a)
                if capturing:
                    self.captures[-1].append(None)  # what the nodes print
                return None
            self._note_mounts(words, srun_argv)
        if "/" in first and first[0] not in "-'\"$":
            argv = self.argv(words)
            head = argv[0][1].text if argv else None
            if head is not None and self.read_repo(head) is not None:
                for a in standalone:
                    self.assign(a)
                return self._launch(n, [v for _, v in argv])
        if first in ("bash", "sh", "exec", "setsid", "sbatch", "nohup") or first.startswith(("$", '"$')):
            for a in standalone:
                self.assign(a)
            argv = self.argv(words)
            launched = self._launch(n, [v for _, v in argv])
            if launched is not _PASS:
                return launched
            if capturing:
                self.captures[-1].append(None)  # `"$PY" -c ...`: what a program prints is unknown
            return self._maybe_server(n, argv, list(prefix))
        if capturing:
            if first in self.state.functions:
                for a in standalone:
                    self.assign(a)
                argv = self.argv(words)
                body = self.state.functions[first]
                if isinstance(body, Node):
                    # recorded with what it prints (build_server_config is called alike for many jobs)
                    return self.call(first, [v for _, v in argv[1:]])
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
        if shape[2] is not None and ".sh" in n.text and first not in self.state.functions:
            # A program the chain does not follow (the interpreter skips its words: it cannot start a server) may
            # run a repository script its words name: `docker run ... bash -lc "cd ... && bash trace_replay.sh"`.
            for _, v in self.argv(words)[1:]:
                text = v.text if v.text is not None else v.known_prefix
                if ".sh" in text:
                    self.note_scripts(text)
        return _PASS

    # -- eval, bash -c, child scripts --------------------------------------------------------
    def _eval(self, n: Node, argv: list[tuple[Field, Value]]) -> Tri:
        texts = [v.text for _, v in argv[1:]]
        if any(t is None for t in texts):
            # Known only in part: the words before the first unknown one still say which program runs
            # (`bash /workspace/.../bench.sh 2 1 16 8 /models ...`, the client a string holds).
            parts: list[str] = []
            for _, v in argv[1:]:
                parts.append(v.text if v.text is not None else v.known_prefix)
                if v.text is None:
                    break
            known = " ".join(parts)
            whole = known if known[-1:].isspace() else known.rpartition(" ")[0]
            if whole.split():
                self.note_scripts(whole)
            elif (loc := n.location()) not in self.opaque_commands:
                self.opaque_commands.append(loc)  # a program known only at run time: any function may run
            return None
        # One argument is run as it was built (its parts keep where they were written).
        origin = argv[1][1] if len(argv) == 2 else None
        return self.run_string(" ".join(t for t in texts if t is not None), n, origin, subshell=False)

    def note_scripts(self, text: str) -> None:
        """The repository scripts ``text`` (a command's words, known) names, noted as named (:func:`read_named`): a
        path relative to the working directory, or else to the directory of the script running (`bash
        trace_replay.sh` after a `cd` inside the string)."""
        for word in _SCRIPT_WORDS.findall(text):
            here = posixpath.join(posixpath.dirname(self.recipe_path), word) if not word.startswith("/") else None
            found = next((p for p in (self.repo_path(word), here) if p is not None
                          and unlogged(self.snapshot).read(p) is not None), None)
            if found is not None:
                read_named(self.snapshot, found)

    def run_string(self, text: str, n: Node, origin: Value | None, *, subshell: bool) -> Tri:
        """Parse ``text`` as bash and run it; its words point at where they were written (else the line
        that built the string)."""
        self.string_count += 1
        label = f"{_STRING_PREFIX}{n.script.path}:{n.line}>"
        script = parse_script(label, text.encode())
        if script.problems:
            self.errors.append(f"{n.script.path}:{n.line}: the string run here {_unreadable(script)}; what it runs "
                               "is unknown")
            return None
        servers_before = len(self.state.servers)
        captured_before = self.state.captured

        def run() -> Tri:
            return self.block(script.root.children)

        status = self.subshell(run) if subshell else run()
        built = _Built(script, origin.location if origin is not None else n.location(),
                       origin.spans if origin is not None and origin.text == text else ())
        self._attribute(servers_before, built)
        if self.state.captured is not captured_before and self.state.captured is not None:
            captured = self.state.captured
            captured.vars = {k: built.value(v) if isinstance(v, Value) else v for k, v in captured.vars.items()}
        return status

    def _attribute(self, start: int, built: _Built) -> None:
        """Servers found in a run string: their words point at where they were written."""
        fixed = []
        for s in self.state.servers[start:]:
            flags = tuple(dataclasses.replace(
                f, location=built.location(f.location),
                value=known_or_unknown(built.value(f.value)) if f.value is not None else None,
                keys=tuple(FlagKey(k.path, built.value(k.value)) for k in f.keys)) for f in s.flags)
            fixed.append(Server(flags + _unknown_words(s, built), built.location(s.location, whole=True), s.argv,
                                s.router))
        self.state.servers[start:] = fixed

    def _formatted(self, argv: list[tuple[Field, Value]]) -> str | None:
        """What ``printf FORMAT ARGS`` prints, keeping where each argument was written."""
        text = _printf(argv)
        fmt = argv[1][1].text if len(argv) > 1 else None
        args = [v for _, v in argv[2:]]
        if text is None or fmt is None or re.search(r"%[^s]", fmt.replace("%%", "")) or fmt.count("%s") != len(args):
            return text  # `%d`, or a format applied more than once: where each part came from is not kept
        chunks = fmt.replace("\\n", "\n").replace("\\t", "\t").split("%s")
        parts: list[tuple[str, Value | Location]] = []
        for i, chunk in enumerate(chunks):
            parts.append((chunk.replace("%%", "%"), argv[1][1].location))
            if i < len(args):
                parts.append((args[i].text or "", args[i]))
        return printed(text, parts) if "".join(t for t, _ in parts) == text else text

    def _echoed(self, argv: list[tuple[Field, Value]]) -> str | None:
        """What ``echo ARGS`` prints, keeping where each argument was written."""
        text = _echo(argv)
        if text is None or len(argv) < 2:
            return text
        here = argv[0][1].location
        words = [(v.text or "", v) for _, v in argv[1:] if v.text not in ("-n", "-e", "-ne", "-en", "-E")]
        parts: list[tuple[str, Value | Location]] = []
        for i, (word, v) in enumerate(words):
            parts.extend([(" ", here)] if i else [])
            parts.append((word, v))
        if text.endswith("\n"):
            parts.append(("\n", here))
        return printed(text, parts) if "".join(t for t, _ in parts) == text else text

    def run_command(self, n: Node, values: list[Value]) -> Tri:
        """Run a command given as its words (what a container runs): ``bash -c STRING``, ``bash FILE`` or a
        script by its path; anything else is an error naming it."""
        try:
            status = self._launch(n, values)
        except ShellExit as exc:
            return exc.code == "0" if exc.code else None
        except FLOW:
            return None
        if status is _PASS:
            shown = " ".join(v.text if v.text is not None else "?" for v in values[:3])
            self.errors.append(f"{n.script.path}:{n.line}: runs `{shown}`, which this evaluation does not follow")
            return None
        return status  # type: ignore[return-value]

    def _launch(self, n: Node, values: list[Value]) -> object:
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
                    return self._submitted(n, t, values[k + 1:])
            self.errors.append(f"{n.script.path}:{n.line}: sbatch runs a script this evaluation cannot find")
            return None
        if head is not None and "/" in head and self.read_repo(head) is not None:
            # a script run by its path (`/workspace/.../server.sh`): a child like `bash FILE`
            status = self.child(n, head, values[i + 1:])
            if replaces:
                raise ShellExit("", n)
            return status
        return _PASS

    def _submitted(self, n: Node, path_text: str, args: list[Value]) -> Tri:
        """``sbatch FILE``: the job runs FILE elsewhere; what sbatch prints (a job id) is not FILE's output."""
        if not self.captures:
            return self.child(n, path_text, args)
        saved, self.captures = self.captures, []
        try:
            return self.child(n, path_text, args)
        finally:
            self.captures = saved
            self.captures[-1].append(None)

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
                    self.external_effects += 1  # the container step acts outside the state: not replayable
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
        if len(inner) == 1 and inner[0].type == "redirected_statement" \
                and (program := _stdin_program(inner[0])) is not None:
            return self._stdin_snippet(inner[0], *program)
        if len(inner) == 1 and inner[0].type == "command":
            snippet = self._python_snippet(inner[0])
            if snippet is not None:
                return snippet
            if self._prints_unknown(inner[0]):
                return None  # `$(hostname)`: a program's output, unknown; no state to copy for it
        self.captures.append([])
        # `$(cd "$(dirname "$0")/../.." && pwd)`: a `cd` inside leaves the script's directory as it was.  (Not
        # by overriding `subshell`: a frame more on every subshell costs the deep recursion dearly, see
        # shell.stack.)
        cwd = self.cwd
        try:
            self.subshell(lambda: self.block(inner))
        finally:
            out = self.captures.pop()
            self.cwd = cwd
        if any(c is None for c in out):
            return None
        text = "".join(c for c in out if c is not None).rstrip("\n")
        spans = output_spans(out)
        if spans and len(text.encode()) != sum(size for size, _ in spans):
            spans = _cut(spans, len(text.encode()))  # the trailing newlines `$(...)` drops
        return Value(text, n.location(), expression=n.text, spans=spans)

    def _prints_unknown(self, n: Node) -> bool:
        """A plain external command this chain does not model: what it prints is unknown, and running
        it in ``$(...)`` changes nothing."""
        if n.memo is None:
            n.memo = self._command_shape(n)
        _, words, literal_name, standalone = cast("tuple[list[Node], list[Node], str | None, list[Node]]", n.memo)
        return (bool(words) and not standalone and literal_name is not None and literal_name not in _MODELLED
                and literal_name not in _SILENT and literal_name not in self.state.functions and self._runs_nothing(n))

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

    # -- the models.yaml programs --------------------------------------------------------------
    def _heredoc_program(self, n: Node, redirects: Redirects, program_node: Node) -> Tri:
        """``python3 << PYEOF > "$tmp"``: the program is modelled, what it prints is kept for ``source "$tmp"``."""
        assert redirects.heredoc is not None and redirects.stdout_file is not None
        program = self.heredoc_value(redirects.heredoc)
        path = self._path_value(redirects.stdout_file)
        assignments = self._modelled(program, program_node, n)
        self.program_outputs[file_key(path)] = assignments
        self.external_effects += 1  # kept by the interpreter, not the state: a call doing this is not reused
        texts = [a.value.text for a in assignments]
        written = None if any(t is None for t in texts) else "".join(
            f"{a.name}={_quoted(a.value.text or '')}\n" for a in assignments)
        self.state.files[file_key(path)] = Value(written, n.location(), False, n.text.split("\n", 1)[0])
        return True

    def _modelled(self, program: Value, at: Node, statement: Node) -> list[Assignment]:
        """The assignments a models-YAML program prints; every name it prints is unknown when it is not modelled."""
        text = program.text
        why = ""
        if text is not None:
            env = {k: v.text for k, v in self.state.vars.items()
                   if k in self.state.exported and isinstance(v, Value) and v.text is not None}
            notes: list[str] = []
            try:
                found = model_snippet(text, self.repo_file, env, at.location(), notes)
            except SnippetError as exc:
                why = str(exc)
            else:
                self.errors.extend(f"{statement.script.path}:{statement.line}: {note}" for note in notes)
                return found
        else:
            why = "the program's text is not known: " + program.expression
        self.errors.append(f"{statement.script.path}:{statement.line}: the Python program is not modelled ({why}); "
                           "the variables it prints are unknown")
        shown = text if text is not None else "".join(p.text or "\x01" for p in program.parts)
        return [Assignment(name, Value(None, at.location(), False, f"printed by the Python program at "
                                                                   f"{statement.script.path}:{statement.line}: {why}"))
                for name in printed_names(shown)]

    def _python_snippet(self, command: Node) -> Value | None:
        words = [c for c in command.children if c.named and c.type not in ("file_redirect",)]
        if len(words) != 3 or words[0].text not in ("python3", "python") or words[1].text != "-c":
            return None
        if "safe_load" not in words[2].text or not printed_names(words[2].text):
            return None  # not a program printing assignments: what it prints is a command's output
        argv = self.argv(words)
        if len(argv) != 3:
            return None
        self._apply(self._modelled(argv[2][1], command, command))
        return Value("", command.location(), expression="python3 -c output (assignments applied)")

    def _stdin_snippet(self, n: Node, redirects: Redirects, program_node: Node) -> Value:
        """``$(python3 - <<PY ... PY)`` (llm-d's server.sh, evaluated by ``eval``): as ``python3 -c``."""
        assert redirects.heredoc is not None
        self._apply(self._modelled(self.heredoc_value(redirects.heredoc), program_node, n))
        return Value("", n.location(), expression="python3 output (assignments applied)")

    def _apply(self, assignments: list[Assignment]) -> None:
        """What ``eval`` of the program's output does: the assignments, kept with their YAML positions
        (unknown when not modelled); ``export NAME=...`` lines export."""
        for a in assignments:
            self.state.vars[a.name] = a.value
            if a.exported:
                self.state.exported.add(a.name)


def _unknown_words(server: Server, built: _Built) -> tuple[ServerFlag, ...]:
    """The words of a run string's server line that are an unknown part on their own (``${CONFIG}`` after a
    ``sed`` rewrote it): they could be any flags, so each is an unknown flag, as :func:`parse_flags` makes an
    unknown word where a flag is expected.  The flag parser took them for positional arguments (the marker
    standing in for them is a word of text); a marked part of a flag's value is that value's, not one."""
    values = {f.value.text for f in server.flags if f.value is not None}
    return tuple(ServerFlag(UNKNOWN_FLAG, known_or_unknown(built.value(word)), built.location(word.location),
                            word.conditional)
                 for word in server.argv[1:]
                 if word.text is not None and word.text.startswith(_UNKNOWN) and word.text not in values)


def _unreadable(script: Script) -> str:
    """Why a text the chain runs is not evaluated: not bash, or bash the grammar cannot read (see shell.bash_syntax)."""
    return "cannot be read by tree-sitter-bash (bash can)" if script.bash_accepts else "is not valid bash"


def _marked(content: Value) -> str | None:
    """A written file's text, each unknown part (``ID=${SLURM_JOB_ID}``) marked so that only the values
    holding it are unknown (:func:`known_or_unknown`); None when not even its parts are known."""
    if content.text is not None:
        return content.text
    if not content.parts:
        return None
    return "".join(text for text, _ in _marked_parts(content))


def _marked_parts(value: Value) -> list[tuple[str, Value | Location]]:
    """A value of known and unknown pieces as the pieces of a command string, each where it was written,
    its unknown pieces marked."""
    out: list[tuple[str, Value | Location]] = []
    for p in value.parts:
        if p.text is not None:
            out.append((p.text, p if p.spans else p.location))
        elif p.parts:
            out.extend(_marked_parts(p))
        else:
            out.append((_UNKNOWN + (_shown(p.expression) or "unknown") + _UNKNOWN, p.location))
    return out


def _line_places(content: Value) -> tuple[Location, ...]:
    """Where each line of a written file was written (from its parts when its text is not wholly known)."""
    if content.lines or not content.parts:
        return content.lines
    places: list[Location | None] = [None]
    for part in content.parts:
        for k, segment in enumerate((part.text or "").split("\n")):
            if k:
                places.append(None)
            if places[-1] is None and (segment or part.text is None):
                places[-1] = part.line_location(k)
    return tuple(p if p is not None else content.location for p in places)


def _shown(expression: str) -> str:
    """An unknown part's expression in characters bash gives no meaning (inside a marker)."""
    return re.sub(r"\W+", "_", expression).strip("_")


def _stdin_program(n: Node) -> tuple[Redirects, Node] | None:
    """``python3 - <<EOF`` with its output captured (a Python program read from a here-document)."""
    if n.memo is None:
        n.memo = redirects_of(n)
    r = n.memo
    if not isinstance(r, Redirects) or r.heredoc is None or r.stdout_file is not None or r.opaque:
        return None
    body = r.body
    words = [c for c in body.children if c.named] if body is not None and body.type == "command" else []
    if body is None or not words or not 1 <= len(words) <= 2 or (len(words) == 2 and words[1].text != "-"):
        return None
    if not re.fullmatch(r"python3?(\.\d+)?", words[0].text) or "safe_load" not in r.heredoc.text:
        return None
    return r, body


def _heredoc_program(n: Node) -> tuple[Redirects, Node] | None:
    """``python3 << EOF > FILE`` (a Python program read from a here-document, its output written to a file)."""
    if n.memo is None:
        n.memo = redirects_of(n)
    r = n.memo
    if not isinstance(r, Redirects) or r.heredoc is None or r.stdout_file is None or r.append or r.opaque:
        return None
    body = r.body
    if body is None or body.type != "command" or len([c for c in body.children if c.named]) != 1:
        return None
    name = body.child_of_type("command_name")
    if name is None or not re.fullmatch(r"python3?(\.\d+)?", name.text) or "safe_load" not in r.heredoc.text:
        return None
    return r, body


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _cut(spans: tuple[Span, ...], size: int) -> tuple[Span, ...]:
    """The spans of the first ``size`` bytes."""
    out: list[Span] = []
    for length, origin in spans:
        if size <= 0:
            break
        if length > size:
            origin = origin.location if isinstance(origin, Value) else origin
        out.append((min(length, size), origin))
        size -= length
    return tuple(out)


def _same_place(a: Location, b: Location) -> bool:
    return (a.path, a.line, a.column, a.end_line, a.end_column) == (b.path, b.line, b.column, b.end_line, b.end_column)


class _Built:
    """A run string: its words point at the value that wrote them (see :mod:`.provenance`), else at the line
    that built the string."""

    def __init__(self, script: Script, where: Location, spans: tuple[Span, ...]) -> None:
        self.script = script
        self.where = dataclasses.replace(where, note="in the command string built here")
        self.layout = Layout(spans) if spans else None

    def location(self, loc: Location, whole: bool = False) -> Location:
        if loc.path != self.script.path:
            return loc
        if self.layout is not None and not whole and loc.line > 0:
            found = self.layout.written_at(self.script.offset(loc.line, loc.column),
                                           self.script.offset(loc.end_line, loc.end_column))
            if found is not None and not _same_place(found, self.where):
                return found
        return self.where

    def value(self, v: Value) -> Value:
        loc = self.location(v.location)
        if loc is self.where and v.text:
            # `NAME=${X}` in the string: the value (not the whole word) was written where X was
            whole = written_at(v.spans, 0, len(v.text.encode()))
            loc = whole if whole is not None else loc
        return v if loc is v.location else dataclasses.replace(v, location=loc, lines=(), spans=())


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
        return substitute(args, text)
    return None


def _line_count(args: list[str]) -> int | None:
    if args == []:
        return 10
    if len(args) == 1 and re.fullmatch(r"-\d+", args[0]):
        return int(args[0][1:])
    if len(args) == 2 and args[0] == "-n" and args[1].isdigit():
        return int(args[1])
    return None
