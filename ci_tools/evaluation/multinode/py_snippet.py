"""The Python programs of the AMD server scripts that read a models YAML, modelled without running them.

``server_sglang.sh`` reads ``amd_utils/models.yaml`` with an inline Python
program and evals what it prints (``eval "$(python3 -c "...")"``);
``server_atom.sh`` runs a here-document program (``python3 << PYEOF >
"$tmp"``) over ``models_atom.yaml`` and sources the file it printed.  Both
print ``NAME="value"`` (or ``NAME='value'``) lines.  Running repository code
is out of the question (the program is part of the change under review), so
its text is read with :mod:`ast` and only the shapes the repository uses are
evaluated:

- ``x = yaml.safe_load(f)`` of the file opened from a string constant (the
  shell has already substituted ``${MODELS_YAML}``), and
  ``yaml.safe_load(f).get('<model>', {})``;
- the entry choice ``model_key = f'{model_name}-AgentX' if is_agentic else
  f'{model_name}-DI'`` with the fall-back to the bare name when that key is
  absent (``if model_key not in models: ... model_key = model_name``);
- aliases ``a = b.get('key', {})`` / ``m = models[model_key]``;
- ``print(f'NAME="{expr}"')`` where ``expr`` is ``a.get('key', default)``
  (nested ``.get`` too; the default may itself be such an expression),
  ``eval_formula(...)`` of one (an int, or a formula over the environment's
  integer variables, as the helper does), a name bound by ``s, e =
  parse_range(a.get(...), start, end)``, or a shell-quoting helper of the
  program applied to one (``def sh(v): return v.replace("'", ...)`` printed
  inside single quotes; ``bash_escape``'s backslash before a backslash, ``"``,
  ``$`` and a backquote, printed inside double quotes): the shell reads back
  the value itself.

llm-d's ``server.sh`` runs ``eval "$(python3 - <<PY ...)"`` over the recipe
YAML named by ``CONFIG_FILE``: ordinary Python (``.get``, ``or``, ``strip()``,
``int()``, ``if x is not None``, ``for k, v in d.items()``) evaluated by
:mod:`.py_values`, printing ``NAME={x!r}`` and ``export {k}={v!r}`` lines
read as the shell reads them (:mod:`.py_printed`).  Where Python would raise,
the program stops there and what it printed before stands (a note says why).

Anything else leaves that variable unknown with the reason; a program of
another shape gives no assignments (:class:`SnippetError`), and the caller
makes every name it prints unknown (:func:`printed_names`), never empty.
Values keep the line of ``models.yaml`` they come from; defaults written in
the program point at the script line that runs it.
"""

from __future__ import annotations

import ast
import functools
import re
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ...bounded import BoundedDict
from ...findings import Location, with_article
from ...revision.yamlpos import YamlLoadError, load_yaml
from ...shell.model import Value
from .located import Located, located
from .py_printed import DEFAULT, Assignment, PrintedAssignments, prints_assignments
from .py_values import ProgramFails, SnippetError, called, truthy

__all__ = ["Assignment", "SnippetError", "model_snippet", "printed_names"]


def _const(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Dict) and not node.keys:
        return {}
    raise SnippetError(f"`{ast.unparse(node)}` is not a constant")


def _formula(text: str, env: Mapping[str, str]) -> int | None:
    """``eval_formula``'s arithmetic over the environment's integer variables (no Python is run)."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return None

    def ev(node: ast.AST) -> int | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name):
            raw = env.get(node.id)
            return int(raw) if raw is not None and re.fullmatch(r"-?\d+", raw.strip()) else None
        if isinstance(node, ast.BinOp):
            a, b = ev(node.left), ev(node.right)
            if a is None or b is None:
                return None
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            if isinstance(node.op, ast.FloorDiv) and b:
                return a // b
            if isinstance(node.op, ast.Div) and b:
                return int(a / b)
        return None

    return ev(tree.body)


class _Model(PrintedAssignments):
    def __init__(self, program: ast.Module, read_yaml: Any, env: Mapping[str, str], where: Location,
                 source_of: Callable[[str], bytes | None]) -> None:
        self.read_yaml = read_yaml
        self.source_of = source_of  # a file the program read, by repository path (for where each word is)
        self.notes: list[str] = []
        self.roots: dict[int, str] = {}
        self.env = env
        self.where = where
        self.names: dict[str, Located | Value | tuple[Value, Value]] = {}
        self.documents: dict[str, Located] = {}
        self.out: list[Assignment] = []
        self.program = program
        self.opened: dict[str, str] = {}  # `with open(PATH) as NAME`: NAME -> PATH
        # Helpers that quote a string for the shell that reads the output -> the quote the output is safe in.
        self.quoting: dict[str, str] = {}
        self.quoted: dict[str, str] = {}  # names bound to a helper's result -> that quote

    def run(self) -> list[Assignment]:
        if not _calls(self.program, "safe_load") or not _calls(self.program, "print"):
            raise SnippetError("the program does not print values read with yaml.safe_load")
        try:
            for stmt in self.program.body:
                self.statement(stmt)
        except ProgramFails as exc:
            # what it printed before stands; the shell that reads its output goes on
            self.notes.append(f"the program fails: {exc}; only what it printed before is read")
        return self.out

    # -- statements ---------------------------------------------------------------------------
    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.With):
            path = self._opened(stmt)
            for item in stmt.items:
                if isinstance(item.optional_vars, ast.Name):
                    self.opened[item.optional_vars.id] = path
            for inner in stmt.body:
                if isinstance(inner, ast.Assign) and _calls(inner.value, "safe_load"):
                    name = self._target(inner)
                    self.names[name] = self._loaded(inner.value, path)
            return
        if isinstance(stmt, ast.FunctionDef):
            quote = _quotes_for_the_shell(stmt)
            if quote:
                self.quoting[stmt.name] = quote
            return
        if isinstance(stmt, ast.If):
            self._if(stmt)
            return
        if isinstance(stmt, ast.For):
            self._for(stmt)
            return
        if isinstance(stmt, ast.Assign):
            self._assign(stmt)
            return
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and called(stmt.value) == "print":
            self._print(stmt.value)

    def _loaded(self, value: ast.expr, path: str) -> Located | Value:
        """``yaml.safe_load(f)`` (the document; ``... or {}`` too), or ``.get(...)`` of it."""
        if (isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or) and len(value.values) == 2
                and isinstance(value.values[1], ast.Dict) and not value.values[1].keys):
            value = value.values[0]
        if isinstance(value, ast.Call) and called(value) == "safe_load":
            return self.read_yaml(path)
        return self.expr(value)

    def _opened(self, stmt: ast.With) -> str:
        for item in stmt.items:
            call = item.context_expr
            if isinstance(call, ast.Call) and called(call) == "open" and call.args:
                arg = call.args[0]
                named = self.names.get(arg.id) if isinstance(arg, ast.Name) else None
                path = named.text if isinstance(named, Value) else _const(arg) if named is None else None
                if isinstance(path, str):
                    return path
        raise SnippetError("`with` does not open a file named by a constant")

    def _target(self, stmt: ast.Assign) -> str:
        if len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            return stmt.targets[0].id
        raise SnippetError(f"`{ast.unparse(stmt)}` assigns to something other than one name")

    def _if(self, stmt: ast.If) -> None:
        # `if model_key not in models: if model_name in models: model_key = model_name else: ...`
        test = stmt.test
        if (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.NotIn)
                and isinstance(test.left, ast.Name) and isinstance(test.comparators[0], ast.Name)):
            key = self.names.get(test.left.id)
            doc = self.names.get(test.comparators[0].id)
            if isinstance(key, Value) and isinstance(doc, Located) and doc.get(key.text or "") is None:
                for inner in stmt.body:
                    if isinstance(inner, ast.If):
                        self._fallback(inner, doc, test.left.id)
            return
        try:
            taken = truthy(self.value(test))
        except SnippetError:
            if prints_assignments(stmt):
                raise
            return  # a conditional this model cannot decide that prints no assignment (an error message)
        for inner in stmt.body if taken else stmt.orelse:
            self.statement(inner)

    def _for(self, stmt: ast.For) -> None:
        """``for k, v in d.items():`` over a mapping of the file (``env:`` entries exported one by one)."""
        target, loop = stmt.target, stmt.iter
        if not (isinstance(target, ast.Tuple) and len(target.elts) == 2
                and all(isinstance(e, ast.Name) for e in target.elts) and isinstance(loop, ast.Call)
                and called(loop) == "items" and isinstance(loop.func, ast.Attribute) and not loop.args
                and not stmt.orelse):
            raise SnippetError(f"`{ast.unparse(stmt).splitlines()[0]}` is not a modelled loop")
        owner = self.value(loop.func.value)
        if not isinstance(owner.value, dict):
            raise ProgramFails(f"`{ast.unparse(loop)}`: {with_article(type(owner.value).__name__)} has no .items "
                               f"(its value at {owner.location.as_text()})")
        key_name, value_name = (e.id for e in target.elts if isinstance(e, ast.Name))
        for key, entry in owner.value.items():
            self.names[key_name] = Located(key, entry.key or entry.location)
            self.names[value_name] = entry
            for inner in stmt.body:
                self.statement(inner)

    def _fallback(self, stmt: ast.If, doc: Located, key_name: str) -> None:
        test = stmt.test
        if (isinstance(test, ast.Compare) and isinstance(test.ops[0], ast.In) and isinstance(test.left, ast.Name)):
            candidate = self.names.get(test.left.id)
            if isinstance(candidate, Value) and doc.get(candidate.text or "") is not None:
                self.names[key_name] = candidate
                return
        raise SnippetError(f"models.yaml has no entry {self.names.get(key_name)!r} (nor its bare model name)")

    def _assign(self, stmt: ast.Assign) -> None:
        value = stmt.value
        if len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Tuple) and isinstance(value, ast.Call) \
                and called(value) == "parse_range":
            names = [t.id for t in stmt.targets[0].elts if isinstance(t, ast.Name)]
            pair = self._range(value)
            if len(names) == 2:
                self.names[names[0]], self.names[names[1]] = pair
            return
        if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
            return
        name = stmt.targets[0].id
        self.quoted.pop(name, None)
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in self.quoting:
            self.quoted[name] = self.quoting[value.func.id]
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            self.names[name] = Value(value.value, self.where)
        elif isinstance(value, ast.IfExp) and isinstance(value.test, ast.Name):
            chosen = value.body if self._truth(value.test.id) else value.orelse
            self.names[name] = self._text(chosen)
        elif isinstance(value, ast.Compare) and any(isinstance(n, ast.Attribute) and n.attr == "strip"
                                                     for n in ast.walk(value)):
            # is_agentic = '${IS_AGENTIC:-0}'.strip().lower() in ('1', 'true')
            self.names[name] = Value("1" if self._agentic(value) else "", self.where)
        elif isinstance(value, (ast.Subscript, ast.Call, ast.BoolOp, ast.UnaryOp, ast.IfExp, ast.Compare)):
            try:
                self.names[name] = self.value(value)
            except SnippetError:
                try:
                    self.names[name] = self.expr(value)  # the models programs' helpers (eval_formula, ...)
                except SnippetError:
                    self.names.pop(name, None)  # a name this model cannot follow: later uses say so

    def _truth(self, name: str) -> bool:
        found = self.names.get(name)
        return isinstance(found, Value) and bool(found.text)

    def _agentic(self, node: ast.Compare) -> bool:
        left = node.left
        while isinstance(left, ast.Call) and isinstance(left.func, ast.Attribute):
            left = left.func.value
        text = _const(left)
        options = _const(node.comparators[0]) if isinstance(node.comparators[0], ast.Constant) else tuple(
            _const(e) for e in getattr(node.comparators[0], "elts", []))
        return str(text).strip().lower() in options

    def _text(self, node: ast.AST) -> Value:
        if isinstance(node, ast.JoinedStr):
            parts = []
            for p in node.values:
                if isinstance(p, ast.Constant):
                    parts.append(str(p.value))
                elif isinstance(p, ast.FormattedValue) and isinstance(p.value, ast.Name):
                    found = self.names.get(p.value.id)
                    if not isinstance(found, Value) or found.text is None:
                        raise SnippetError(f"`{ast.unparse(node)}` uses an unknown name")
                    parts.append(found.text)
                else:
                    raise SnippetError(f"`{ast.unparse(node)}` is not a modelled f-string")
            return Value("".join(parts), self.where)
        value = _const(node)
        return Value(str(value), self.where)

    def _range(self, call: ast.Call) -> tuple[Value, Value]:
        raw = self.expr(call.args[0])
        start, end = (str(_const(a)) for a in call.args[1:3])
        # the range as models.yaml writes it ("1-512"), or the default the program passes to .get
        plain = raw.plain() if isinstance(raw, Located) else raw.text
        text = plain if isinstance(plain, str) else None
        where = raw.location
        if text is not None and "-" in text:
            parts = text.split("-")
            if len(parts) == 2:
                return Value(parts[0], where), Value(parts[1], where)
            raise SnippetError(f"parse_range({text!r}) splits into {len(parts)} parts (the program would fail)")
        return Value(start, self.where), Value(end, self.where)

    # -- expressions ---------------------------------------------------------------------------
    def expr(self, node: ast.AST) -> Located | Value:
        if isinstance(node, ast.Name):
            found = self.names.get(node.id)
            if isinstance(found, (Located, Value)):
                return found
            raise SnippetError(f"`{node.id}` is not known")
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Name):
            doc = self.expr(node.value)
            key = self.names.get(node.slice.id)
            if isinstance(doc, Located) and isinstance(key, Value):
                entry = doc.get(key.text or "")
                if entry is not None:
                    return entry
            raise SnippetError(f"`{ast.unparse(node)}` has no value")
        if isinstance(node, ast.Call):
            name = called(node)
            if name == "get" and isinstance(node.func, ast.Attribute):
                owner = self.expr(node.func.value)
                key = _const(node.args[0])
                entry = owner.get(str(key)) if isinstance(owner, Located) else None
                if entry is not None:
                    return entry
                if len(node.args) > 1 and not isinstance(node.args[1], (ast.Constant, ast.Dict)):
                    return self.expr(node.args[1])  # the default is another value of the program
                default = _const(node.args[1]) if len(node.args) > 1 else None
                return Located(default, self.where) if isinstance(default, dict) else _default(default, self.where)
            if name == "safe_load" and node.args and isinstance(node.args[0], ast.Name) \
                    and node.args[0].id in self.opened:
                return self._loaded(node, self.opened[node.args[0].id])
            if name == "eval_formula":
                return self._eval_formula(self.expr(node.args[0]))
            if isinstance(node.func, ast.Name) and name in self.quoting and len(node.args) == 1:
                quoted = self.expr(node.args[0])
                if isinstance(quoted, Located) and not isinstance(quoted.value, str):
                    raise SnippetError(f"`{ast.unparse(node)}` quotes {with_article(type(quoted.value).__name__)}, "
                                       "not a string (the program would fail)")
                return quoted  # what the shell reads back is the string itself
        raise SnippetError(f"`{ast.unparse(node)}` is not a modelled expression")

    def _eval_formula(self, found: Located | Value) -> Value:
        raw = found.plain() if isinstance(found, Located) else found.text
        where = found.location
        if isinstance(raw, bool):
            return Value(str(int(raw)), where)
        if isinstance(raw, (int, float)):
            return Value(str(int(raw)), where)
        result = _formula(str(raw), self.env)
        if result is None:
            # the helper prints a warning and keeps the text
            return Value(None, where, expression=f"eval_formula({raw!r}): a variable is not a known integer")
        return Value(str(result), where, expression=f"{raw} = {result}")

    def _print(self, call: ast.Call) -> None:
        if not call.args or not isinstance(call.args[0], ast.JoinedStr):
            return
        parts = call.args[0].values
        head = parts[0] if parts else None
        if not (isinstance(head, ast.Constant) and isinstance(head.value, str)):
            return
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)=([\"'])", head.value)
        tail = parts[2] if len(parts) == 3 else None
        if (m is None or not isinstance(parts[1], ast.FormattedValue) or not isinstance(tail, ast.Constant)
                or tail.value != m.group(2)):
            self.print_word(parts)
            return
        name = m.group(1)
        printed = parts[1].value
        quote = (self.quoted.get(printed.id) if isinstance(printed, ast.Name)
                 else self.quoting.get(printed.func.id) if isinstance(printed, ast.Call)
                 and isinstance(printed.func, ast.Name) else None)
        if quote is not None and quote != m.group(2):
            # Escaped for the other quote: the shell reads the escapes back as characters of the value.
            self.out.append(Assignment(name, Value(None, self.where, expression=(
                f"`{ast.unparse(printed)}` is escaped for {quote}-quoting but printed inside {m.group(2)}"))))
            return
        try:
            found = self.expr(printed)
        except SnippetError as exc:
            self.out.append(Assignment(name, Value(None, self.where, expression=str(exc))))
            return
        if isinstance(found, Located):
            self.out.append(Assignment(name, Value(_python_str(found.plain()), found.location,
                                                   expression=DEFAULT if found.location is self.where else "")))
        else:
            self.out.append(Assignment(name, found))


# What a backslash escapes inside a bash double-quoted string (the rest stays as written).
_DOUBLE_QUOTED_ESCAPES = frozenset('\\"$`')


def _quotes_for_the_shell(stmt: ast.FunctionDef) -> str:
    """The quote inside which the helper's output reads back, in the shell, as its argument; "" for any other
    function.  ``def sh(v): return v.replace("'", "'\\''")``: single quotes.  ``def bash_escape(s): return
    s.replace('\\', '\\\\').replace('"', '\\"').replace('$', '\\$')...``: double quotes, each replacement
    putting a backslash before one of the characters a backslash escapes there, the backslash itself first
    (else the later escapes would be escaped again)."""
    args = stmt.args.args
    body = stmt.body[1:] if ast.get_docstring(stmt) is not None else stmt.body
    if len(args) != 1 or len(body) != 1 or not isinstance(body[0], ast.Return):
        return ""
    value = body[0].value
    replaced: list[tuple[object, object]] = []
    while (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "replace"
           and len(value.args) == 2 and all(isinstance(a, ast.Constant) for a in value.args)):
        replaced.append((_const(value.args[0]), _const(value.args[1])))
        value = value.func.value
    if not (isinstance(value, ast.Name) and value.id == args[0].arg and replaced):
        return ""
    replaced.reverse()  # in the order they apply
    if len(replaced) == 1 and replaced[0][0] == "'":
        return "'"
    escapes = [old for old, new in replaced if isinstance(old, str) and new == "\\" + old]
    if (len(escapes) == len(replaced) and set(escapes) <= _DOUBLE_QUOTED_ESCAPES
            and len(set(escapes)) == len(escapes) and escapes[0] == "\\"):
        return '"'
    return ""


_PRINTED = re.compile(r"""print\(\s*f?["']([A-Za-z_][A-Za-z0-9_]*)=""")


def printed_names(program: str) -> list[str]:
    """The variables a program's ``print(f"NAME=...")`` lines assign (read from its text, parsed or not)."""
    return list(dict.fromkeys(_PRINTED.findall(program)))


def _default(value: Any, where: Location) -> Value:
    return Value(_python_str(value), where, expression=DEFAULT)


def _python_str(value: Any) -> str:
    """What an f-string prints: Python's ``str`` (``True``, ``0.8``, ``None``)."""
    return str(value)


def _calls(tree: ast.AST, name: str) -> bool:
    """Whether ``tree`` calls a function or method named ``name``."""
    return any(isinstance(n, ast.Call) and called(n) == name for n in ast.walk(tree))


@functools.lru_cache(maxsize=512)
def _parsed(program: str) -> ast.Module:
    try:
        with warnings.catch_warnings():
            # `'\\`'` in a program is an invalid escape Python reads as written (it warns, then runs): not the
            # user's concern in ci-tools' output.
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.simplefilter("ignore", SyntaxWarning)
            return ast.parse(program)
    except SyntaxError as exc:
        raise SnippetError(f"the program does not parse: {exc.msg}") from None


@functools.lru_cache(maxsize=32)
def _yaml_tree(path: str, data: bytes) -> Located:
    """The YAML file as a located tree, once per content (every job of a snapshot reads the same file)."""
    try:
        return located(load_yaml(data, path, last_duplicate_wins=True).value, path)
    except YamlLoadError as exc:
        raise SnippetError(str(exc)) from None


class _RecordingEnv(Mapping[str, str]):
    """The environment, noting every name the model looks up (so a result can be reused, see below)."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env
        self.read: dict[str, str | None] = {}

    def __getitem__(self, name: str) -> str:
        value = self.env[name]
        self.read[name] = value
        return value

    def get(self, name: str, default: Any = None) -> Any:
        value = self.env.get(name)
        self.read[name] = value
        return default if value is None else value

    def __iter__(self) -> Any:
        raise TypeError("the model reads names, it does not list them")

    def __len__(self) -> int:
        return len(self.env)


@dataclass(frozen=True)
class _Outcome:
    """One evaluation of a program: what it read (environment, files) and what it gave."""

    env: tuple[tuple[str, str | None], ...]
    files: tuple[tuple[str, str, bytes], ...]  # (as the program names it, repository path, content)
    assignments: tuple[Assignment, ...] | None
    error: str = ""
    notes: tuple[str, ...] = ()


# Jobs of one model run the same program against the same files: its outcome is reused when what it read agrees.
_OUTCOMES: BoundedDict[tuple[str, Location], list[_Outcome]] = BoundedDict(512)


def model_snippet(program: str, read_text: Any, env: Mapping[str, str], where: Location,
                  notes: list[str] | None = None) -> list[Assignment]:
    """The ``NAME="value"`` lines the program would print, read from the YAML it loads.

    ``read_text(path)`` gives the file the program opens as (its repository
    path, its bytes), or None.  Raises :class:`SnippetError` for a program of
    another shape.  ``notes`` receives what a reader should know of the run:
    the program fails part way (its earlier output stands), a top-level
    section it reads is absent from the file.
    """
    key = (program, where)
    for seen in _OUTCOMES.get(key, ()):
        if all(env.get(name) == value for name, value in seen.env) and all(
                (found := read_text(named)) is not None and found[0] == path and found[1] is data
                for named, path, data in seen.files):
            if seen.assignments is None:
                raise SnippetError(seen.error)
            if notes is not None:
                notes.extend(seen.notes)
            return list(seen.assignments)
    tree = _parsed(program)
    opened: list[tuple[str, str, bytes]] = []
    recording = _RecordingEnv(env)

    def read_yaml(path: str) -> Located:
        found = read_text(path)
        if found is None:
            raise SnippetError(f"{path} is not a file of this repository")
        opened.append((path, found[0], found[1]))
        return _yaml_tree(*found)

    def source_of(path: str) -> bytes | None:
        return next((data for _, repo_path, data in opened if repo_path == path), None)

    outcomes = _OUTCOMES.get(key)
    if outcomes is None:
        outcomes = _OUTCOMES.put(key, [])
    model = _Model(tree, read_yaml, recording, where, source_of)
    try:
        assignments = model.run()
    except SnippetError as exc:
        if len(outcomes) < 16:
            outcomes.append(_Outcome(tuple(recording.read.items()), tuple(opened), None, str(exc)))
        raise
    if len(outcomes) < 16:
        outcomes.append(_Outcome(tuple(recording.read.items()), tuple(opened), tuple(assignments),
                                 notes=tuple(model.notes)))
    if notes is not None:
        notes.extend(model.notes)
    return assignments
