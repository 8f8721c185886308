"""Files a multinode job's chain reads beyond its recipe's own sources, and whether a change to them counts.

A multinode recipe hands the job to a chain of scripts it does not source:
InferenceX's AMD recipes ``cd`` into ``amd_utils/`` and run ``submit.sh``,
which ``sbatch``-es ``job.slurm``, whose containers run ``server.sh`` and
``server_sglang.sh`` (or ``server_vllm.sh``, ``server_atom.sh``), reading
``models.yaml``.  These files decide the servers' command lines, yet no
recipe's closure (what it sources) holds them, so a change to them used to
count for no config at all.  The chain's evaluation
(:mod:`ci_tools.evaluation.multinode`) reads them through a
:class:`~ci_tools.revision.read_log.ReadLog`: a changed file a row's chain
reads (or tests for existence) at the head or at the base counts for that
row's config when the row's servers then start otherwise (a role, a flag, a
key, a server's environment, a router: the evaluations at the base and the
head compared), or evaluation cannot tell; a file counts for a difference
when a value the servers start with was written on one of its changed lines,
or, where none is, a changed shell file when no other changed file is such a
source, and a data file when no changed shell file is read.  In a shell file, a
changed statement that runs after one that starts a server or router in that
file (the statements after it in its blocks, other branches of an ``if``
aside: the decode rank's ``else`` is not after the prefill server), where a
changed line may run for the job (its ``if`` conditions read with the values
their variables held when the job's chain reached them), and a changed
function that code names count too: the benchmark client and the barriers
run there, and evaluation does not model them.  A YAML file (a model
table) and a file only tested for (``[[ -f ]]``) count only through the
servers.  So a model table's entry for another model, or a pre-flight step of
``job.slurm`` that no server sees, changes nothing, while a server flag
``server_sglang.sh`` builds, or the client options after its servers, count.

Only changed files under the shared library's directory (``benchmarks/``)
that no recipe's closure or data inputs claim open this path, so a change of
a single-node recipe costs no multinode evaluation.  A shell file whose
change is only comments and whitespace, and a YAML file whose data is equal,
change nothing.  A script the chain names and does not run itself (the client
``eval "$BENCH_CMD"`` starts, ``bench.sh``, known only up to its arguments; the
agentic client container's ``trace_replay.sh``) runs after the servers, where
evaluation does not follow: its change counts for the jobs that name it.
Python programs the chain starts by their path inside a string (``python3
$WS/sync.py``) are not followed, and are not counted.
"""

from __future__ import annotations

import difflib
import posixpath
import re
from typing import Callable, Iterable, Iterator, Mapping, Sequence

import yaml

from ..config import ProjectConfig
from ..evaluation.diff import shown
from ..findings import Location
from ..jobs.job import Job
from ..jobs.launcher_copies import Guard, holds
from ..revision.snapshot import Snapshot
from ..shell.model import RecipeEval, ServerFlag
from ..shell.parse import Node, if_clauses
from .run_effect import RunEffect
from .shell_diff import BASE, HEAD, SHELL_NAME, Change, last_line

# How the coverage message says it, for every config a chain file's change affects.
CHAIN_REASON = "file their multinode chain reads changed"
_SHELL_SUFFIXES = (".sh", ".bash", ".slurm")
_YAML_SUFFIXES = (".yaml", ".yml")
# Names a script may assign: `NAME=`, `NAME+=`, `NAME[i]=`, a `for` loop's or `read`'s variable, `export`/`local`
# ones included (read generously: a name taken for assigned is only left unknown); `NAME="${NAME:-default}"` keeps
# a value the script was started with, and is no assignment of it here.
_ASSIGNED = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?\+?=(\"?\$\{([A-Za-z_][A-Za-z0-9_]*):?[-=])?"
                       r"|\bfor\s+([A-Za-z_][A-Za-z0-9_]*)|\bread\b(?:\s+-\S+)*((?:\s+[A-Za-z_][A-Za-z0-9_]*)+)")
_COMMENT_LINES = re.compile(r"(?m)^[ \t]*#.*$")


class ChainReads:
    """For one change: the changed files each multinode row's chain reads, and whether each changes the row's run
    (the row evaluated at the head; at the base where what it read differs, or its servers are compared)."""

    def __init__(self, effect: RunEffect, config: ProjectConfig, base: Snapshot, head: Snapshot,
                 changed: frozenset[str], candidates: Iterable[str], claimed: Callable[[], frozenset[str]]) -> None:
        self.effect = effect
        self.config = config
        self.base = base
        self.head = head
        self.changed = changed
        self._same_start: dict[str, bool] = {}
        self._differs: dict[str, bool] = {}
        self._lines: dict[str, dict[str, frozenset[int]]] = {}
        self._code_lines: dict[tuple[str, str], frozenset[int]] = {}
        self._late: dict[tuple[str, str], frozenset[str]] = {}
        self._file_words: dict[tuple[str, str, tuple[int, ...]], frozenset[str]] = {}
        self._ranges: dict[tuple[str, str, tuple[int, ...]], list[tuple[int, int]]] = {}
        # The changed files a chain may read (coverage.is_chain_input: under the shared library's directory).
        self.candidates = frozenset(candidates)
        self._claimed = claimed
        self._open: frozenset[str] | None = None
        self._counts: dict[str, bool] = {}

    def open_files(self) -> frozenset[str]:
        """The candidates no recipe's closure or inputs claim (computed once, only when a row asks)."""
        if self._open is None:
            self._open = self.candidates - self._claimed() if self.candidates else frozenset()
        return self._open

    def read_changed(self, job: Job, own: frozenset[str]) -> list[str]:
        """The changed files (other than ``own``, the row's closure and inputs, judged elsewhere) that the chain of
        multinode ``job`` reads at either revision and whose change counts, sorted."""
        if not job.multinode or not self.open_files():
            return []
        wanted = self.candidates - own
        if not wanted:
            return []
        at_head = _reads(self.effect, HEAD, job) | _tested(self.effect, HEAD, job) | _named(self.effect, HEAD, job)
        found = wanted & at_head
        if wanted - found and not self._reads_alike(job, at_head):
            found |= (wanted - found) & (_reads(self.effect, BASE, job) | _tested(self.effect, BASE, job)
                                         | _named(self.effect, BASE, job))
        return sorted(p for p in found if self._counts_change(p) and self._changes_run(job, p))

    def _changes_run(self, job: Job, path: str) -> bool:
        """Whether the change of ``path`` (a file the job's chain reads) changes the job's run: its servers start
        otherwise and the change explains it (:meth:`_explains`), or evaluation cannot tell; in a shell file also a
        changed statement that runs after a server or router starts in that file, or a changed function code
        there names (the benchmark client, the barriers, which evaluation does not model).  A model table
        (YAML) counts only through the servers, a file only tested for too; any other file the chain reads (a
        template) counts whatever changed."""
        # A script the chain names and evaluation does not run (the client, after the servers): the head's client
        # changed (asked first: the base is evaluated only when the head does not name it).
        if path in _named(self.effect, HEAD, job) and path not in _reads(self.effect, HEAD, job):
            return self._named_change_runs(job, path)
        if not any(path in _reads(self.effect, side, job) for side in (HEAD, BASE)) \
                and path in _named(self.effect, BASE, job):
            return self._named_change_runs(job, path)
        differ = self._servers_differ(job)
        if not any(path in _reads(self.effect, side, job) for side in (HEAD, BASE)):
            # Only tested for existence (`[[ -f patches/x.py ]]` in a branch for another image): what it holds
            # reaches the job only where the servers show it.
            return differ and self._explains(job, path)
        if differ and self._explains(job, path):
            return True
        if path.endswith(_YAML_SUFFIXES):
            return False
        if not path.endswith(_SHELL_SUFFIXES):
            return True
        diff = self.effect.diff(path)
        for c in diff.changes:
            result = self.effect.evaluated(c.side, job)
            ranges = self._after_ranges(c.side, path, _starts(result, path))
            if any(first <= c.line <= last for first, last in ranges) and self._may_run(c, path, result):
                return True
        return any(bool(diff.functions & self._late_words(side, job)) for side in (HEAD, BASE))

    def _may_run(self, change: Change, path: str, result: RecipeEval | None) -> bool:
        """Whether a line of code of the changed statement may run for the job: one whose ``if`` conditions are not
        false with the values their variables held when the job's chain reached each ``if`` (``RecipeEval.branches``;
        a variable unset there, or unknown, is unknown here: the client container's `-n "${CLIENT_IMAGE:-}"`
        branch of `server_sglang.sh`, taken with `"$IS_AGENTIC_RUN" == "1"`, is false for a throughput job, which
        sets it to 0, whatever its image).  An ``if`` the chain did not reach leaves its branches possible."""
        branches = result.branches if result is not None else {}
        statements = self.effect.diff(path).side(change.side).statements
        differing = sorted(line for line in self._differing_code(change.side, path)
                           if change.line <= line <= change.end_line)
        return not differing or _some_line_runs(statements, differing, lambda at: branches.get((path, at)))

    def _named_change_runs(self, job: Job, path: str) -> bool:
        """Whether the change of ``path``, a script the job's chain names and does not run (the client), may change
        what the job runs: a changed statement whose ``if`` conditions are not false with the variables the job's
        servers start with (`elif [[ "$ENGINE" == "atom-disagg" ]]` is false for an SGLang job's client), or a
        changed function, or a side that does not parse.  A variable the script assigns itself is unknown there."""
        diff = self.effect.diff(path)
        if not diff.parsed or diff.functions:
            return True
        sides: dict[str, tuple[dict[str, str], frozenset[int]]] = {}
        for c in diff.changes:
            if c.side not in sides:  # the job's variables there, and the lines of code that differ
                text = ((self.head if c.side == HEAD else self.base).read(path) or b"").decode("utf-8", "replace")
                sides[c.side] = self._client_values(c.side, job, text), self._differing_code(c.side, path)
            values, differing = sides[c.side]
            if any(holds(g, values) is False for g in c.guards):
                continue
            # The change is a whole statement (a `for` loop); the lines that differ say which branch inside it
            # (no line of this side differs: lines were only added on the other, whose change says it).
            statements = diff.side(c.side).statements
            changed = sorted(line for line in differing if c.line <= line <= c.end_line)
            if _some_line_runs(statements, changed, lambda _: values):
                return True
        return False

    def _client_values(self, side: str, job: Job, text: str) -> dict[str, str]:
        """The variables a script the chain names (``text`` at ``side``) starts with, as far as known: those every
        server of the job starts with alike (the client runs in the first node's container), less those the script
        assigns."""
        result = self.effect.evaluated(side, job)
        values: dict[str, str | None] = {}
        for env in result.server_env if result is not None else ():
            for name, value in env.items():
                values[name] = value.text if values.get(name, value.text) == value.text else None
        assigned = _assigned_names(text)
        return {name: text for name, text in values.items() if text is not None and name not in assigned}

    def _after_ranges(self, side: str, path: str, starts: tuple[int, ...]) -> list[tuple[int, int]]:
        """The lines of the statements of ``path`` that run after a server starts at one of ``starts``."""
        key = (side, path, starts)
        if key not in self._ranges:
            statements = self.effect.diff(path).side(side).statements
            self._ranges[key] = [(node.line, last_line(node)) for line in starts for node in _after(statements, line)]
        return self._ranges[key]

    def _late_words(self, side: str, job: Job) -> frozenset[str]:
        """Every word the job's chain may run after a server starts, at ``side``: the words of the statements of
        each shell file it reads that run after one starting a server or router there (:func:`_after`; function
        definitions aside), and the words of the bodies of the functions these name, transitively (a changed function among them
        runs after the server; one only called before changes what runs only as far as the servers show).  The
        words of strings count (``run_barrier_or_die "..." "$BARRIER_CMD"``, a name in a text ``eval`` runs); a
        function run only through a text built before the server and run after it is not seen."""
        key = (side, job.id)
        if key not in self._late:
            result = self.effect.evaluated(side, job)
            files = sorted(p for p in _reads(self.effect, side, job) if p.endswith(_SHELL_SUFFIXES))
            words: set[str] = set()
            bodies: dict[str, Node] = {}
            for path in files:
                reading = self.effect.diff(path).side(side)
                bodies.update(reading.functions)
                starts = _starts(result, path)
                file_key = (side, path, starts)
                if file_key not in self._file_words:  # the same for every job whose servers start there
                    self._file_words[file_key] = frozenset().union(
                        *(_words(node) for line in starts for node in _after(reading.statements, line)))
                words |= self._file_words[file_key]
            todo = [name for name in words if name in bodies]
            while todo:
                for word in _words(bodies[todo.pop()]):
                    if word not in words:
                        words.add(word)
                        if word in bodies:
                            todo.append(word)
            self._late[key] = frozenset(words)
        return self._late[key]

    def _explains(self, job: Job, path: str) -> bool:
        """Whether the change of ``path`` is why the job's servers differ: a value they start with comes from one of
        its changed lines (values keep the line that wrote them), at the head or at the base.  Where it is no
        such source (a value may lose its line on its way, through ``sed``; a changed condition chooses among
        values written elsewhere), a shell file is one when no other changed file the chain reads is, and a data
        file (a model table, a file only tested for) when no changed shell file is read: the logic is there."""
        if self._sources_changed(job, path):
            return True
        others = [other for other in self.candidates - {path}
                  if any(other in _reads(self.effect, side, job) for side in (HEAD, BASE))
                  and self._counts_change(other)]
        if path.endswith(_SHELL_SUFFIXES):
            return not any(self._sources_changed(job, other) for other in others)
        return not any(other.endswith(_SHELL_SUFFIXES) for other in others)

    def _sources_changed(self, job: Job, path: str) -> bool:
        changed = self._changed_lines(path)
        for side in (HEAD, BASE):
            result = self.effect.evaluated(side, job)
            if result is not None and any(loc.path == path and loc.line in changed[side] for loc in _places(result)):
                return True
        return False

    def _differing_code(self, side: str, path: str) -> frozenset[int]:
        """The changed lines of ``path`` at ``side`` that hold code (not blank, not a comment); read once per side and
        file (every job whose chain reads it asks)."""
        key = (side, path)
        if key not in self._code_lines:
            text = ((self.head if side == HEAD else self.base).read(path) or b"").decode("utf-8", "replace")
            code = {n for n, t in enumerate(text.splitlines(), 1) if t.strip() and not t.strip().startswith("#")}
            self._code_lines[key] = self._changed_lines(path)[side] & code
        return self._code_lines[key]

    def _changed_lines(self, path: str) -> dict[str, frozenset[int]]:
        """The lines of ``path`` the change replaced, removed (base) or wrote (head), 1-based, per side."""
        if path not in self._lines:
            base = (self.base.read(path) or b"").decode("utf-8", "replace").splitlines()
            head = (self.head.read(path) or b"").decode("utf-8", "replace").splitlines()
            at: dict[str, set[int]] = {BASE: set(), HEAD: set()}
            for tag, b1, b2, h1, h2 in difflib.SequenceMatcher(None, base, head, autojunk=False).get_opcodes():
                if tag != "equal":
                    at[BASE].update(range(b1 + 1, b2 + 1))
                    at[HEAD].update(range(h1 + 1, h2 + 1))
            self._lines[path] = {side: frozenset(lines) for side, lines in at.items()}
        return self._lines[path]

    def _servers_differ(self, job: Job) -> bool:
        if job.id not in self._differs:
            self._differs[job.id] = self._evaluations_differ(job)
        return self._differs[job.id]

    def _evaluations_differ(self, job: Job) -> bool:
        """Whether the job's servers start otherwise at the head than at the base (a role, a flag, a key of a
        structured flag, a server's environment, a router), or an evaluation cannot tell (it stopped on something
        it could not read, or reached no server).  A model table (``models.yaml``) is read by the chain's
        programs only to build the servers' command lines and environment: an entry of another model, or one
        the job's settings do not select, changes none of them."""
        head, base = self.effect.evaluated(HEAD, job), self.effect.evaluated(BASE, job)
        if head is None or base is None or head.errors or base.errors or not head.servers or not base.servers:
            return True
        return _started(head) != _started(base)

    def _reads_alike(self, job: Job, at_head: frozenset[str]) -> bool:
        """Whether the base's evaluation of ``job`` reads what the head's read, without evaluating it: none of those
        files changed and the chain starts alike (the launch step's environment, the node the runners file
        gives).  Evaluation is the same program on the same input, so it reads the same files."""
        if at_head & self.changed:
            return False
        key = job.id
        if key not in self._same_start:
            self._same_start[key] = _start(self.config, self.base, job) == _start(self.config, self.head, job)
        return self._same_start[key]

    def _counts_change(self, path: str) -> bool:
        if path not in self._counts:
            self._counts[path] = _content_changed(self.effect, path, self.base.read(path), self.head.read(path))
        return self._counts[path]


def _start(config: ProjectConfig, snapshot: Snapshot, job: Job) -> tuple[object, ...]:
    """What a multinode job's chain starts from at ``snapshot`` besides the files it reads."""
    from ..jobs.contract import launch_env
    from ..jobs.resolution import resolver_for

    resolver = resolver_for(config, snapshot)
    resolution = resolver(job)
    fleet = resolution.fleets[0] if resolution.fleets else ""
    return launch_env(job, config, snapshot), resolution, resolver.node_of(str(job.get("runner") or ""), fleet)


def _started(result: RecipeEval) -> tuple[object, ...]:
    """What a multinode evaluation starts, as compared: each server's role, flags (with their keys) and
    environment, and the routers' flags."""
    def flags(server: Sequence[ServerFlag]) -> tuple[object, ...]:
        return tuple((f.name, shown(f.value), tuple((k.path, shown(k.value)) for k in f.keys)) for f in server)

    servers = tuple((result.role_of(i), flags(server), tuple(sorted((k, shown(v)) for k, v in result.env_of(i).items())))
                    for i, server in enumerate(result.servers))
    return servers, tuple(flags(router.flags) for router in result.routers)


def _branch_guards(statements: Sequence[Node], line: int) -> list[Guard]:
    """The conditions under which the statement at ``line`` runs, from the ``if`` statements around it: each earlier
    clause's condition false and its own clause's true (an ``else``: every clause's false)."""
    return [guard for _, guard in _guards_by_if(statements, line)]


def _some_line_runs(statements: Sequence[Node], lines: Iterable[int],
                    values_at: Callable[[int], Mapping[str, str] | None]) -> bool:
    """Whether one of ``lines`` has no ``if`` condition around it that is false, each ``if`` read with the values
    ``values_at(its line)`` gives (None: an ``if`` whose conditions are left undecided)."""
    return any(all(holds(guard, values) is not False for at, guard in _guards_by_if(statements, line)
                   if (values := values_at(at)) is not None)
               for line in lines)


def _guards_by_if(statements: Sequence[Node], line: int) -> list[tuple[int, Guard]]:
    """:func:`_branch_guards`, each with the line of the ``if`` statement it is of."""
    guards: list[tuple[int, Guard]] = []
    todo = [n for n in statements if n.line <= line <= last_line(n)]
    while todo:
        node = todo.pop()
        if node.type == "if_statement":
            at = node.line
            clauses, else_body = if_clauses(node)
            bodies = [body for _, body, _ in clauses] + [else_body or []]
            for i, body in enumerate(bodies):
                cond = clauses[i][0] if i < len(clauses) else []
                if cond and cond[0].line <= line <= last_line(cond[-1]):
                    # A condition runs when the clauses before it are false; a test (`[[ ]]`, `[ ]`) that is
                    # false too changes nothing.
                    guards.extend((at, (tuple(c), False)) for c, _, _ in clauses[:i])
                    if all(x.type == "test_command" for x in cond if x.named and x.type != "comment"):
                        guards.append((at, (tuple(cond), True)))
                    break
                if body and body[0].line <= line <= last_line(body[-1]):
                    guards.extend((at, (tuple(c), False)) for c, _, _ in clauses[:i])
                    if cond:
                        guards.append((at, (tuple(cond), True)))
                    break
        todo.extend(c for c in node.children if c.named and c.line <= line <= last_line(c))
    return guards


def _assigned_names(text: str) -> set[str]:
    """Every name ``text`` may assign (see ``_ASSIGNED``), its comment lines aside."""
    names: set[str] = set()
    for assigned, _, kept, looped, read in _ASSIGNED.findall(_COMMENT_LINES.sub("", text)):
        names.update(n for n in (assigned if assigned != kept else "", looped) if n)
        names.update(read.split())
    return names


def _words(node: Node) -> set[str]:
    """The names written in ``node`` (commands, their words, the text of strings), its function definitions and
    comments left out."""
    out: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if (n.type == "function_definition" and n is not node) or n.type == "comment":
            continue
        if not n.children:
            out.update(SHELL_NAME.findall(n.text))
        stack.extend(n.children)
    return out


# Children of a statement that are other branches of it: what runs after one branch is not in them.
_ALTERNATIVES = frozenset({"elif_clause", "else_clause", "case_item"})


def _after(statements: Sequence[Node], line: int) -> list[Node]:
    """The statements that run after the one at ``line`` (where a server starts): those after it in its block,
    then after each statement enclosing it, other branches of an ``if``/``case`` left out (the AMD chain's
    decode rank runs the ``else`` of the rank-0 branch that starts the prefill server and its client)."""
    out: list[Node] = []
    siblings: Sequence[Node] = statements
    while True:
        at = next((i for i, n in enumerate(siblings) if n.named and n.line <= line <= last_line(n)), None)
        if at is None:
            return out
        holder = siblings[at]
        out.extend(n for n in siblings[at + 1:] if n.named and n.type not in _ALTERNATIVES)
        if not holder.children or holder.line == line == last_line(holder) and holder.type == "command":
            return out
        inner = [c for c in holder.children if c.named]
        if inner == list(siblings):
            return out
        siblings = inner


def _starts(result: RecipeEval | None, path: str) -> tuple[int, ...]:
    """The lines of ``path`` at which the evaluation started a server or router."""
    return tuple(sorted({loc.line for loc in [*(result.server_command if result else ()),
                                               *(router.location for router in (result.routers if result else ()))]
                         if loc.path == path}))


def _places(result: RecipeEval) -> Iterator[Location]:
    """Where each value the servers and routers start with was written."""
    for i, server in enumerate(result.servers):
        for flag in server:
            if flag.value is not None:
                yield flag.value.location
            yield from (key.value.location for key in flag.keys)
        yield from (value.location for value in result.env_of(i).values())
    for router in result.routers:
        yield from (flag.value.location for flag in router.flags if flag.value is not None)


def _reads(effect: RunEffect, side: str, job: Job) -> frozenset[str]:
    result = effect.evaluated(side, job)
    return result.read_files if result is not None else frozenset()


def _named(effect: RunEffect, side: str, job: Job) -> frozenset[str]:
    result = effect.evaluated(side, job)
    return result.named_files if result is not None else frozenset()


def _tested(effect: RunEffect, side: str, job: Job) -> frozenset[str]:
    result = effect.evaluated(side, job)
    return result.tested_files if result is not None else frozenset()


def _content_changed(effect: RunEffect, path: str, base: bytes | None, head: bytes | None) -> bool:
    """False for a shell file whose statements and functions read the same (comments, blank lines, layout) and a
    YAML file whose data is equal; True for anything else, a file added or removed included."""
    if base is None or head is None:
        return True
    suffix = posixpath.splitext(path)[1]
    if suffix in _SHELL_SUFFIXES:
        diff = effect.diff(path)
        return not diff.parsed or bool(diff.changes or diff.functions)
    if suffix in _YAML_SUFFIXES:
        try:
            return bool(yaml.safe_load(base) != yaml.safe_load(head))
        except yaml.YAMLError:
            return True
    return True


__all__ = ["CHAIN_REASON", "ChainReads"]
