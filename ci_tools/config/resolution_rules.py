"""How each runner fleet picks a job's recipe, as data: the ``recipe-resolution`` rules.

GitHub starts ``runners/launch_<fleet>.sh`` on the node that takes a job
(``<fleet>`` is the node name before its first ``_``: ``mi355x-amds_03``
runs ``launch_mi355x-amds.sh``), and that launcher decides what the job runs.
These rules say the same in a form ci-tools can apply: the first rule whose
``match`` holds for the job and the fleet decides, with one of three kinds:

- ``script``: a bash script in the repository, the first existing of
  ``templates`` (or of ``recipe-templates`` for the job's node kind when the
  rule names none), started with the job's environment;
- ``srt-slurm``: an srt-slurm recipe YAML named by an ``additional-settings``
  entry (``CONFIG_FILE=recipes/<path>[:selector]``), found under ``root`` when
  the repository holds it; a recipe the launcher takes from its srt-slurm
  checkout instead is *external*;
- ``external``: everything the rule matches runs from outside the repository.

The defaults are InferenceX's launchers at 843c6254f (each rule names the
launcher lines it follows).  A repository's own rules in ``.ci-tools.yaml``
are tried before them; a rule with an empty ``match`` ends the search, so a
repository can replace the defaults entirely.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import UsageError

SCRIPT = "script"
SRT_SLURM = "srt-slurm"
EXTERNAL = "external"
KINDS = (SCRIPT, SRT_SLURM, EXTERNAL)

MATCH_KEYS = ("fleet", "runner", "framework", "multinode", "scenario", "setting", "without-setting")
RULE_KEYS = ("name", "match", "kind", "templates", "setting", "root", "strip-prefix", "inputs")


@dataclass(frozen=True)
class Match:
    """Conditions on a job (and the fleet running it); an empty tuple or None matches anything."""

    fleet: tuple[str, ...] = ()  # fnmatch globs on the fleet name (`mi355x-amds`, `b200-dgxc*`)
    runner: tuple[str, ...] = ()  # globs on the config's runner label
    framework: tuple[str, ...] = ()  # globs on the config's framework
    multinode: bool | None = None
    scenario: str | None = None
    setting: str | None = None  # an additional-settings name the job must set
    without_setting: str | None = None  # ... or must not set


@dataclass(frozen=True)
class ResolutionRule:
    name: str
    match: Match
    kind: str
    # script: candidate paths in the order the launcher tries them (str.format
    # placeholders, see ci_tools.jobs.resolution.PLACEHOLDERS); empty: the
    # configured recipe-templates for the job's node kind.
    templates: tuple[str, ...] = ()
    # srt-slurm: the additional-settings entry naming the recipe, where the
    # repository keeps srt-slurm recipes, and the prefix the launcher's
    # checkout puts before that directory.
    setting: str = "CONFIG_FILE"
    root: str = "benchmarks/multi_node/srt-slurm-recipes"
    strip_prefix: str = "recipes/"
    # More repository files the recipe reads as data (templates like
    # `benchmarks/multi_node/llm-d-recipes/{settings[CONFIG_FILE]}`).
    inputs: tuple[str, ...] = ()
    source: str = "default"  # where the rule is defined, for `recipe show`

    @property
    def is_default(self) -> bool:
        return self.source.startswith("default")

    def srt_recipe_path(self, written: str) -> str:
        """The repository path an srt-slurm reference names (its ``:selector`` left off): under ``root`` when it
        begins with ``strip_prefix``, else as written."""
        written = written.strip()
        inside = written[len(self.strip_prefix):] if written.startswith(self.strip_prefix) else None
        return posixpath.normpath(f"{self.root}/{inside}" if inside is not None else written)


_AMD_DISAGG = ("sglang-disagg", "vllm-disagg", "atom-disagg")
_SN = "benchmarks/single_node"
# Before 2026-06-02 (#1571) single-node recipes lay directly under single_node/, and before 2026-02-19 (#666)
# directly under benchmarks/: a script candidate of today's layout that no revision file matches is looked for
# there too (a replay of older history), in that order.
EARLIER_SCRIPT_DIRS = ((f"{_SN}/fixed_seq_len/", f"{_SN}/"), (f"{_SN}/fixed_seq_len/", "benchmarks/"),
                       (f"{_SN}/", "benchmarks/"))

DEFAULT_RULES: tuple[ResolutionRule, ...] = (
    # launch_mi355x-amds.sh, IS_MULTINODE: `benchmarks/multi_node/[agentic/]<prefix>_<precision>_mi355x_<framework>.sh`
    # for the disagg frameworks (the configured multinode recipe-templates) ...
    ResolutionRule("mi355x-amds multinode disagg script", Match(fleet=("mi355x-amds",), multinode=True,
                                                                framework=_AMD_DISAGG), SCRIPT,
                   source="default: runners/launch_mi355x-amds.sh"),
    # ... and the single-node directory for any other framework.
    ResolutionRule("mi355x-amds multinode script", Match(fleet=("mi355x-amds",), multinode=True), SCRIPT,
                   (f"{_SN}/fixed_seq_len/{{model_prefix}}_{{precision}}_{{gpu}}_{{framework}}.sh",),
                   source="default: runners/launch_mi355x-amds.sh"),
    # launch_gb200-nv.sh: llm-d runs its wrapper script, which reads the llm-d recipe named by CONFIG_FILE.
    ResolutionRule("gb200-nv llm-d wrapper", Match(fleet=("gb200-nv",), multinode=True, framework=("llmd-vllm",)),
                   SCRIPT, ("benchmarks/multi_node/{model_prefix}_{precision}_{gpu}_llmd-vllm-disagg.sh",),
                   inputs=("benchmarks/multi_node/llm-d-recipes/{settings[CONFIG_FILE]}",),
                   source="default: runners/launch_gb200-nv.sh"),
    # launch_gb200-nv.sh: the legacy dynamo-sglang path without an srt-slurm recipe.
    ResolutionRule("gb200-nv legacy dynamo-sglang script",
                   Match(fleet=("gb200-nv",), multinode=True, framework=("dynamo-sglang",), without_setting="CONFIG_FILE"),
                   SCRIPT, ("benchmarks/multi_node/{model_prefix}_{precision}_{gpu}_{framework}.sh",),
                   source="default: runners/launch_gb200-nv.sh"),
    # launch_b200-dgxc.sh (launch_b200-dgxc-slurm.sh links to it): TileRT runs its disagg script.
    ResolutionRule("b200-dgxc tilert script", Match(fleet=("b200-dgxc*",), multinode=True, framework=("tilert",)),
                   SCRIPT, ("benchmarks/multi_node/{model_prefix}_{precision}_{gpu}_{framework}-disagg.sh",),
                   source="default: runners/launch_b200-dgxc.sh"),
    # Every other multinode fleet (gb200-nv, gb300-nv, b300-nv, b200-dgxc, b200-nscale-slurm,
    # h100-dgxc-slurm, h200-dgxc-slurm) submits the srt-slurm recipe of CONFIG_FILE.
    ResolutionRule("srt-slurm recipe", Match(multinode=True), SRT_SLURM,
                   source="default: runners/launch_{gb200-nv,gb300-nv,b300-nv,b200-dgxc,...}.sh"),
    # Single node.  launch_h100-*.sh, launch_mi300x-amds.sh, launch_mi325x-*.sh: no framework in the name.
    ResolutionRule("single-node script without framework", Match(fleet=("h100-*", "mi300x-*", "mi325x-*"), multinode=False),
                   SCRIPT, (f"{_SN}/{{scenario_dir}}/{{model_prefix}}_{{precision}}_{{gpu}}{{mtp}}.sh",),
                   source="default: runners/launch_{h100-cr,h100-cw,h100-dgxc-slurm,mi300x-amds,mi325x-amds,mi325x-tw}.sh"),
    # launch_h200-cw.sh, launch_h200-nb.sh: only the legacy framework suffix (_trt).
    ResolutionRule("single-node script with framework suffix", Match(fleet=("h200-cw", "h200-nb"), multinode=False),
                   SCRIPT, (f"{_SN}/{{scenario_dir}}/{{model_prefix}}_{{precision}}_{{gpu}}{{framework_suffix}}{{mtp}}.sh",),
                   source="default: runners/launch_{h200-cw,h200-nb}.sh"),
    # The other single-node launchers (b200-*, b300-nv, h200-dgxc-slurm, mi355x-amds,
    # rtx6000pro-lat): `_<framework>` first, then the legacy suffix (the recipe-templates).
    ResolutionRule("single-node script", Match(multinode=False), SCRIPT,
                   source="default: runners/launch_{b200-*,b300-nv,h200-dgxc-slurm,mi355x-amds,rtx6000pro-lat}.sh"),
)


def _where(value: Any, fallback: int) -> int:
    span = getattr(value, "span", None)
    return span[0] if span else fallback


def _globs(value: Any, what: str, path: str, line: int) -> tuple[str, ...]:
    if isinstance(value, str) and value:
        return (value,)
    if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise UsageError(f"`{what}` must be a string or a non-empty list of strings, found {value!r}", path=path, line=line)


def _string(value: Any, what: str, path: str, line: int) -> str:
    if isinstance(value, str) and value:
        return value
    raise UsageError(f"`{what}` must be a non-empty string, found {value!r}", path=path, line=line)


def _line_of(mapping: Any, key: str, fallback: int) -> int:
    spans = getattr(mapping, "key_spans", None)
    return spans[key][0] if isinstance(spans, dict) and key in spans else fallback


def _known_keys(value: Any, allowed: tuple[str, ...], where: str, shape: str, path: str, line: int) -> Mapping[str, Any]:
    """``value`` as a mapping with only ``allowed`` keys, else a usage error at the offending line."""
    if not isinstance(value, Mapping):
        raise UsageError(f"`{where}` must be {shape}, found {value!r}", path=path, line=line)
    unknown = sorted(str(k) for k in value if k not in allowed)
    if unknown:
        raise UsageError(f"unknown key `{unknown[0]}` in `{where}`, expected one of: {', '.join(allowed)}",
                         path=path, line=_line_of(value, unknown[0], line))
    return value


def _match(raw: Any, where: str, path: str, line: int) -> Match:
    if raw is None:
        return Match()
    value = _known_keys(raw, MATCH_KEYS, f"{where}.match", "a mapping of conditions", path, line)
    kwargs: dict[str, Any] = {}
    for key in ("fleet", "runner", "framework"):
        if key in value:
            kwargs[key] = _globs(value[key], f"{where}.match.{key}", path, _line_of(value, key, line))
    if "multinode" in value:
        if not isinstance(value["multinode"], bool):
            raise UsageError(f"`{where}.match.multinode` must be true or false, found {value['multinode']!r}",
                             path=path, line=_line_of(value, "multinode", line))
        kwargs["multinode"] = value["multinode"]
    if "scenario" in value:
        scenario = value["scenario"]
        if scenario not in ("fixed-seq-len", "agentic-coding"):
            raise UsageError(f"`{where}.match.scenario` must be fixed-seq-len or agentic-coding, found {scenario!r}",
                             path=path, line=_line_of(value, "scenario", line))
        kwargs["scenario"] = scenario
    for key, attr in (("setting", "setting"), ("without-setting", "without_setting")):
        if key in value:
            kwargs[attr] = _string(value[key], f"{where}.match.{key}", path, _line_of(value, key, line))
    return Match(**kwargs)


def _rule(raw: Any, index: int, path: str, line: int) -> ResolutionRule:
    where = f"recipe-resolution[{index}]"
    value = _known_keys(raw, RULE_KEYS, where, "a mapping with `match` and `kind`", path, line)
    kind = value.get("kind")
    if kind not in KINDS:
        raise UsageError(f"`{where}.kind` must be one of {', '.join(KINDS)}, found {kind!r}",
                         path=path, line=_line_of(value, "kind", line))
    kwargs: dict[str, Any] = {}
    if "templates" in value:
        kwargs["templates"] = _globs(value["templates"], f"{where}.templates", path, _line_of(value, "templates", line))
    if "inputs" in value:
        kwargs["inputs"] = _globs(value["inputs"], f"{where}.inputs", path, _line_of(value, "inputs", line))
    for key, attr in (("setting", "setting"), ("root", "root"), ("strip-prefix", "strip_prefix")):
        if key in value:
            kwargs[attr] = _string(value[key], f"{where}.{key}", path, _line_of(value, key, line))
    if "root" in kwargs:
        kwargs["root"] = kwargs["root"].rstrip("/")
    if kind != SCRIPT and "templates" in kwargs:
        raise UsageError(f"`{where}.templates` only applies to kind script, not {kind}", path=path,
                         line=_line_of(value, "templates", line))
    name = value.get("name", f"{where} ({kind})")
    return ResolutionRule(name=_string(name, f"{where}.name", path, _line_of(value, "name", line)),
                          match=_match(value.get("match"), where, path, _line_of(value, "match", line)),
                          kind=kind, source=f"{path}:{line}", **kwargs)


def parse_rules(value: Any, path: str, line: int) -> tuple[ResolutionRule, ...]:
    """The rules of a ``recipe-resolution`` list, tried before :data:`DEFAULT_RULES`."""
    if not isinstance(value, list) or not value:
        raise UsageError(f"`recipe-resolution` must be a non-empty list of rules, found {value!r}", path=path, line=line)
    return tuple(_rule(item, i, path, _where(item, line)) for i, item in enumerate(value))
