"""A fast yes/no validator for the subset of JSON Schema that ``schemas/`` uses.

jsonschema is the reference: it produces the detailed errors that
:mod:`ci_tools.schemacheck.check` turns into findings.  It is also slow to import
(about 0.1 s) and walks about 1 ms per master config, which alone would spend
the whole time budget of ``validate`` on a large repository.  Almost every
instance is valid, so each schema is translated here into Python source, one
function per subschema, compiled once per process; jsonschema runs only on
the instances that fail.  ``tests/test_validate_property.py`` checks that both
always agree.

Translation refuses any keyword it does not implement, so a schema edit can
never make the fast path silently skip a rule.
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable, Mapping

Check = Callable[[Any], bool]

# Keywords that do not constrain the instance.
_ANNOTATIONS = frozenset({"$schema", "$id", "$defs", "title", "description", "then", "else"})


def is_integer(value: Any) -> bool:
    """A YAML integer: not a bool, and not a float such as 8.0."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """A finite number: YAML's ``.nan`` and ``.inf`` are not usable values."""
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, int)


def json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON Schema defines it: ``true`` is not ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - exotic YAML values (dates...) compare unequal
        return False


_TYPE_TESTS = {
    "object": "isinstance(x, dict)",
    "array": "isinstance(x, list)",
    "string": "isinstance(x, str)",
    "boolean": "isinstance(x, bool)",
    "integer": "is_integer(x)",
    "number": "is_number(x)",
    "null": "x is None",
}
# The guard under which a keyword applies (JSON Schema ignores, say,
# minLength on a non-string).
_GUARDS = {"object": "isinstance(x, dict)", "array": "isinstance(x, list)",
           "string": "isinstance(x, str)", "number": "is_number(x)"}


class _Translator:
    def __init__(self, root: Mapping[str, Any], prefix: str = "") -> None:
        self.root = root
        self.prefix = prefix
        self.lines: list[str] = []
        self.consts: dict[str, Any] = {}
        self.names: dict[int, str] = {}
        self.refs: dict[str, str] = {}

    def const(self, value: Any) -> str:
        name = f"{self.prefix}c{len(self.consts)}"
        self.consts[name] = value
        return name

    def ref(self, pointer: str) -> str:
        if pointer not in self.refs:
            if not pointer.startswith("#/"):
                raise ValueError(f"only local $ref is supported, found {pointer!r}")
            target: Any = self.root
            for part in pointer[2:].split("/"):
                target = target[part]
            self.refs[pointer] = self.function(target)
        return self.refs[pointer]

    def function(self, schema: Any) -> str:
        """The name of a generated function that checks ``schema``."""
        if id(schema) in self.names:
            return self.names[id(schema)]
        if isinstance(schema, dict) and [k for k in schema if k not in _ANNOTATIONS and not k.startswith("x-")] == ["$ref"]:
            # A bare reference: call the target directly, one call less per value.
            target = self.ref(schema["$ref"])
            self.names[id(schema)] = target
            return target
        name = f"{self.prefix}f{len(self.names)}"
        self.names[id(schema)] = name
        body: list[str] = []
        if schema is False:
            body.append("return False")
        elif schema is not True:
            body.extend(self.statements(schema))
            body.append("return True")
        else:
            body.append("return True")
        self.lines.append(f"def {name}(x: Any) -> bool:")
        self.lines.extend("    " + line for line in body)
        return name

    def statements(self, schema: Mapping[str, Any]) -> list[str]:
        out: list[str] = []
        declared = schema.get("type")
        known = declared if isinstance(declared, str) else None

        def guarded(kind: str, lines: list[str]) -> None:
            if known == kind or (kind == "number" and known == "integer"):
                out.extend(lines)
            else:
                out.append(f"if {_GUARDS[kind]}:")
                out.extend("    " + line for line in lines)

        for keyword, value in schema.items():
            if keyword in _ANNOTATIONS or keyword.startswith("x-"):
                continue
            if keyword == "type":
                names = [value] if isinstance(value, str) else list(value)
                test = " or ".join(_TYPE_TESTS[n] for n in names)
                out.append(f"if not ({test}): return False")
            elif keyword == "$ref":
                out.append(f"if not {self.ref(value)}(x): return False")
            elif keyword == "enum":
                if all(isinstance(v, str) for v in value):
                    out.append(f"if not (isinstance(x, str) and x in {self.const(frozenset(value))}): return False")
                else:
                    out.append(f"if not any(json_equal(x, o) for o in {self.const(list(value))}): return False")
            elif keyword == "const":
                out.append(f"if not json_equal(x, {self.const(value)}): return False")
            elif keyword in ("minimum", "exclusiveMinimum", "maximum"):
                # Comparisons as jsonschema makes them: fail on `<`, `<=`, `>`.
                op = {"minimum": "<", "exclusiveMinimum": "<=", "maximum": ">"}[keyword]
                guarded("number", [f"if x {op} {value!r}: return False"])
            elif keyword == "minLength":
                guarded("string", [f"if len(x) < {int(value)}: return False"])
            elif keyword == "pattern":
                guarded("string", [f"if {self.const(re.compile(value))}.search(x) is None: return False"])
            elif keyword == "minItems":
                guarded("array", [f"if len(x) < {int(value)}: return False"])
            elif keyword == "minProperties":
                guarded("object", [f"if len(x) < {int(value)}: return False"])
            elif keyword == "items":
                item = self.function(value)
                guarded("array", ["for i in x:", f"    if not {item}(i): return False"])
            elif keyword == "required":
                test = " and ".join(f"{k!r} in x" for k in value) or "True"
                guarded("object", [f"if not ({test}): return False"])
            elif keyword == "properties":
                lines = []
                for prop, sub in value.items():
                    lines.append(f"if {prop!r} in x and not {self.function(sub)}(x[{prop!r}]): return False")
                guarded("object", lines)
            elif keyword == "additionalProperties":
                if "patternProperties" in schema:
                    raise ValueError("patternProperties is not supported by the fast validator")
                known_keys = self.const(frozenset(schema.get("properties", {})))
                if value is False:
                    guarded("object", [f"if not {known_keys}.issuperset(x): return False"])
                else:
                    extra = self.function(value)
                    guarded("object", ["for k, v in x.items():",
                                       f"    if k not in {known_keys} and not {extra}(v): return False"])
            elif keyword == "propertyNames":
                check = self.function(value)
                guarded("object", ["for k in x:", f"    if not {check}(k): return False"])
            elif keyword == "dependentRequired":
                lines = []
                for prop, deps in value.items():
                    need = " and ".join(f"{d!r} in x" for d in deps) or "True"
                    lines.append(f"if {prop!r} in x and not ({need}): return False")
                guarded("object", lines)
            elif keyword == "oneOf":
                subs = " + ".join(f"{self.function(s)}(x)" for s in value)
                out.append(f"if ({subs}) != 1: return False")
            elif keyword == "if":
                cond = self.function(value)
                then = self.function(schema.get("then", True))
                other = self.function(schema.get("else", True))
                out.append(f"if not ({then}(x) if {cond}(x) else {other}(x)): return False")
            else:
                raise ValueError(f"schema keyword {keyword!r} is not supported by the fast validator")
        return out


def translate(schema: Mapping[str, Any], prefix: str = "") -> tuple[str, str, dict[str, Any]]:
    """(Python source, entry function name, constants) for ``schema``."""
    translator = _Translator(schema, prefix)
    entry = translator.function(schema)
    return "\n".join(translator.lines) + "\n", entry, translator.consts


def compile_schema(schema: Mapping[str, Any]) -> Check:
    """A function telling whether an instance is valid against ``schema``."""
    source, entry, consts = translate(schema)
    namespace: dict[str, Any] = {"Any": Any, "is_integer": is_integer, "is_number": is_number,
                                 "json_equal": json_equal, **consts}
    exec(compile(source, f"<schema {schema.get('$id', '')}>", "exec"), namespace)  # noqa: S102 - our own schema
    check: Check = namespace[entry]
    return check


def _literal(value: Any) -> str:
    """Deterministic Python source for a constant of the generated module."""
    if isinstance(value, frozenset):
        return f"frozenset({tuple(sorted(value))!r})"
    if isinstance(value, re.Pattern):
        return f"re.compile({value.pattern!r})"
    return repr(value)


def render_module(schemas: Mapping[str, Mapping[str, Any]], digests: Mapping[str, str]) -> str:
    """The source of :mod:`ci_tools.schemacheck.compiled`: every schema, translated.

    Shipping the translation as a module means a ``validate`` process loads
    cached bytecode instead of reading, translating and compiling the schemas.
    """
    head = [
        '"""Fast validity checks of schemas/*.json, generated by ``python -m ci_tools.schemacheck.check``.',
        "",
        "Do not edit: regenerate after changing a schema (tests/test_schema_fast.py fails while",
        'this file is stale).  See :mod:`ci_tools.schemacheck.fast`.',
        '"""',
        "# fmt: off",
        "from __future__ import annotations",
        "",
        "import re",
        "from typing import Any, Callable",
        "",
        "from .fast import is_integer, is_number, json_equal",
        "",
        f"SCHEMA_SHA256 = {dict(sorted(digests.items()))!r}",
        "",
    ]
    body: list[str] = []
    entries: dict[str, str] = {}
    for index, (name, schema) in enumerate(sorted(schemas.items())):
        source, entry, consts = translate(schema, prefix=f"_s{index}")
        body.extend(f"{const}: Any = {_literal(value)}" for const, value in consts.items())
        body.append(source)
        entries[name] = entry
    checks = ", ".join(f"{name!r}: {entry}" for name, entry in entries.items())
    tail = ["", f"CHECKS: dict[str, Callable[[Any], bool]] = {{{checks}}}", ""]
    if re.search(r"\bjson_equal\b", "\n".join(body)) is None:
        head[head.index("from .fast import is_integer, is_number, json_equal")] = (
            "from .fast import is_integer, is_number, json_equal  # noqa: F401")
    return "\n".join(head + body + tail)

