"""One stand-in location for the job's environment during evaluation, the job's own in the result.

A job's environment is written at its search-space row, so a flag passed as
``"$TP"`` points at the config.  If evaluation used those locations, two
jobs of different rows would never agree on ``TP`` even when both have
``TP=8``, and nothing evaluated for one (a function call, a child script,
see :mod:`.memo`) could be reused for the other.  Evaluators therefore give
every environment value the location :data:`JOB_ENV`, and
:func:`relocate_result` puts the job's location in its place once the
evaluation is done.  A location derived from it (the same place with another
note) keeps its note.
"""

from __future__ import annotations

from ..findings import Location
from .model import EarlyExit, FlagKey, MissingEnv, RecipeEval, RouterCommand, ServerFlag, Value

# A path no repository file or pseudo-script ("<string run at ...>") can have.
_MARK = "\x00job environment"
JOB_ENV = Location(_MARK, 0, note="job environment")


class Relocation:
    """Replaces :data:`JOB_ENV` by ``where`` in values, sharing what it rebuilt (values recur across jobs)."""

    def __init__(self, where: Location) -> None:
        self.where = where
        # id -> (original, relocated): the original is kept alive so that its id is not reused.
        self._done: dict[int, tuple[Value, Value]] = {}

    def location(self, loc: Location) -> Location:
        if loc.path != _MARK:
            return loc
        if loc == JOB_ENV:
            return self.where
        w = self.where
        return Location(w.path, w.line, w.column, w.end_line, w.end_column, loc.note)

    def value(self, v: Value) -> Value:
        if v.location.path != _MARK and not (v.alternatives or v.parts or v.lines or v.spans):
            return v  # most values: nothing to relocate
        found = self._done.get(id(v))
        if found is not None and found[0] is v:
            return found[1]
        out = self._rebuilt(v)
        self._done[id(v)] = (v, out)
        return out

    def mapping(self, values: dict[str, Value]) -> dict[str, Value]:
        """``values`` relocated; the test of :meth:`value` inlined, as a recipe's variables number hundreds."""
        value, mark = self.value, _MARK
        return {k: v if v.location.path != mark and not (v.alternatives or v.parts or v.lines or v.spans) else value(v)
                for k, v in values.items()}

    def optional(self, v: Value | None) -> Value | None:
        return None if v is None else self.value(v)

    def _rebuilt(self, v: Value) -> Value:
        loc = self.location(v.location)
        alternatives = tuple(self.value(a) for a in v.alternatives) if v.alternatives else v.alternatives
        parts = tuple(self.value(p) for p in v.parts) if v.parts else v.parts
        lines = tuple(self.location(x) for x in v.lines) if v.lines else v.lines
        spans = tuple((size, self.value(x) if isinstance(x, Value) else self.location(x))
                      for size, x in v.spans) if v.spans else v.spans
        if (loc is v.location and _same(alternatives, v.alternatives) and _same(parts, v.parts)
                and _same(lines, v.lines) and all(x[1] is y[1] for x, y in zip(spans, v.spans))):
            return v
        return Value(v.text, loc, v.conditional, v.expression, alternatives, v.known_prefix, parts, lines, spans)

    def flag(self, f: ServerFlag) -> ServerFlag:
        value = self.optional(f.value)
        loc = self.location(f.location)
        keys = tuple(FlagKey(k.path, self.value(k.value)) for k in f.keys) if f.keys else f.keys
        if value is f.value and loc is f.location and all(a.value is b.value for a, b in zip(keys, f.keys)):
            return f
        return ServerFlag(f.name, value, loc, f.conditional, keys, f.keys_file)


def _same(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    return a is b or all(x is y for x, y in zip(a, b))


_LAST: list[Relocation] = []


def relocation_for(where: Location) -> Relocation:
    """The relocation to ``where``, reused while consecutive jobs share it (the jobs of one row)."""
    if _LAST and _LAST[0].where == where:
        return _LAST[0]
    _LAST[:] = [Relocation(where)]
    return _LAST[0]


def relocate_result(result: RecipeEval, where: Location) -> RecipeEval:
    """``result`` with :data:`JOB_ENV` replaced by ``where`` everywhere (in place; also returned)."""
    r = relocation_for(where)
    location = r.location
    result.variables = r.mapping(result.variables)
    result.env = r.mapping(result.env)
    result.servers = [[r.flag(f) for f in server] for server in result.servers]
    result.server_command = [location(x) for x in result.server_command]
    result.routers = [RouterCommand(tuple(r.flag(f) for f in router.flags), location(router.location))
                      for router in result.routers]
    result.server_env = [r.mapping(env) for env in result.server_env]
    result.early_exits = [e if location(e.location) is e.location
                          else EarlyExit(location(e.location), e.condition, e.code, e.conditional)
                          for e in result.early_exits]
    result.missing_env = [m if location(m.location) is m.location else MissingEnv(m.name, location(m.location))
                          for m in result.missing_env]
    result.opaque_commands = [location(x) for x in result.opaque_commands]
    return result
