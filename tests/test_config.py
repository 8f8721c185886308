from __future__ import annotations

from pathlib import Path

import pytest

from ci_tools.config import ProjectConfig, load_config
from ci_tools.errors import UsageError


def test_defaults_match_the_inferencex_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
    cfg = load_config(tmp_path)
    assert cfg.master_configs == ("configs/*-master.yaml",)
    assert cfg.runners == "configs/runners.yaml"
    assert cfg.changelog == "perf-changelog.yaml"
    assert cfg.single_node_templates[0].startswith("benchmarks/single_node/{scenario_dir}/")
    assert cfg.source is None


def test_file_overrides_and_pr_link(tmp_path: Path) -> None:
    (tmp_path / ".ci-tools.yaml").write_text(
        "repository: acme/bench\nchangelog: CHANGES.yaml\nmaster-configs: [a/*-master.yaml, b.yaml]\n"
        "recipe-templates:\n  single-node: ['r/{model_prefix}.sh']\n"
    )
    cfg = load_config(tmp_path)
    assert cfg.repository == "acme/bench"
    assert cfg.changelog == "CHANGES.yaml"
    assert cfg.master_configs == ("a/*-master.yaml", "b.yaml")
    assert cfg.single_node_templates == ("r/{model_prefix}.sh",)
    assert cfg.pr_link(12) == "https://github.com/acme/bench/pull/12"
    rx = cfg.pr_link_regex()
    m = rx.match("https://github.com/acme/bench/pull/12")
    assert m is not None and m.group("number") == "12"
    assert rx.match("https://github.com/other/bench/pull/12") is None
    assert rx.match("https://github.com/acme/bench/pull/XXX") is None


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("colour: blue\n", "unknown setting `colour`, expected one of: master-configs, runners,", 1),
        ("runners: 3\n", "`runners` must be a string, found the integer 3", 1),
        ("repository: not a slug\n", "`repository` must look like OWNER/NAME", 1),
        ("pr-link-pattern: https://x/pull\n", "`pr-link-pattern` must contain {number}", 1),
        ("changelog: a\nchangelog: b\n", "duplicate key `changelog` (first defined at line 1)", 2),
        ("- a\n", "the configuration must be a mapping", 1),
        ("a: [\n", "invalid YAML", 2),
        ("dispatch: 5\n", "`dispatch` must be a mapping, found the integer 5", 1),
        # Typos inside a section are caught on load, whichever command runs, not when the feature runs.
        ("dispatch:\n  allow-forks: false\n  min-permision: write\n",
         "unknown setting `dispatch.min-permision`, expected one of: min-permission, allow-users,", 3),
        ("sweep:\n  lanchers:\n    mi355x: docker\n", "unknown setting `sweep.lanchers`, expected one of: launchers,", 2),
        ("claims:\n  abbreviatons: {EQUIV: equivalence}\n",
         "unknown setting `claims.abbreviatons`, expected one of: vocabulary, abbreviations,", 2),
        ("claims:\n  vocabulary:\n    TBO: {subjct: --enable-tbo}\n", "unknown setting `claims.vocabulary.TBO.subjct`, expected one of: subject, true-words,", 3),
        ("recipe-templates:\n  single_node: [a.sh]\n", "unknown setting `recipe-templates.single_node`, expected one of: single-node, multinode", 2),
        # Values of a feature section are checked on load too, in the words of the feature that reads them.
        ("sweep:\n  launchers:\n    mi355x: dockr\n",
         "launcher for runner label `mi355x` must be one of repository, direct, docker, slurm, found the string \"dockr\"", 3),
        ("dispatch:\n  min-permission: reed\n", "dispatch.min-permission: found 'reed', expected one of: admin,", 2),
        ("limits:\n  max-file-bytes: 8MB\n", "`max-file-bytes` must be an integer, found the string \"8MB\"", 2),
        ("master-configs: []\n", "`master-configs` must not be empty", 1),
        ("severity:\n  claim-contradicted: warning\n  claims-contradicted: note\n",
         "`severity`: `claims-contradicted` matches no rule; expected a rule id or a prefix", 3),
        ("severity:\n  claim-contradicted: warn\n",
         "`claim-contradicted` must be one of error, warning, note, found the string \"warn\"", 2),
    ],
)
def test_bad_configuration_names_file_line_and_problem(tmp_path: Path, text: str, message: str, line: int) -> None:
    (tmp_path / ".ci-tools.yaml").write_text(text)
    with pytest.raises(UsageError) as err:
        load_config(tmp_path)
    assert message in str(err.value)
    assert str(tmp_path / ".ci-tools.yaml") in str(err.value)
    assert err.value.line == line


def test_missing_explicit_config_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        load_config(tmp_path, tmp_path / "nope.yaml")


def test_repository_falls_back_to_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo/repo")
    assert load_config(tmp_path).repository == "octo/repo"
    assert isinstance(load_config(tmp_path), ProjectConfig)


def test_every_problem_is_listed_in_file_order_with_its_line(tmp_path: Path) -> None:
    (tmp_path / ".ci-tools.yaml").write_text(
        "limits:\n  max-file-bytes: 0\nsweep:\n  lanchers: {}\nrunners: 3\n")
    with pytest.raises(UsageError) as err:
        load_config(tmp_path)
    shown = tmp_path / ".ci-tools.yaml"
    assert str(err.value).splitlines() == [
        f"{shown}:2: `max-file-bytes` must be at least 1, found 0",
        f"{shown}:4: unknown setting `sweep.lanchers`, expected one of: launchers, default-launcher, model-cache, "
        "timeout-minutes, timeouts, grace-seconds, docker-args, srun-args, report-metrics",
        f"{shown}:5: `runners` must be a string, found the integer 3",
    ]
    assert err.value.line == 2


def test_every_key_the_features_read_is_in_the_schema() -> None:
    """A key a feature accepts but the schema lacks would be refused on load: keep them together.

    (A schema key no feature reads yet is refused by that feature's reader, which runs on load too.)
    """
    import json

    from ci_tools.github import auth
    from ci_tools.sweep import settings

    schema = json.loads((Path(__file__).resolve().parent.parent / "schemas" / "ci-tools-config.schema.json").read_text())
    sections = schema["properties"]
    assert set(auth._KEYS) <= set(sections["dispatch"]["properties"])
    assert set(settings._KEYS) <= set(sections["sweep"]["properties"])
    assert set(sections["claims"]["properties"]) == {"vocabulary", "abbreviations", "replace-default-vocabulary"}
    assert set(sections["limits"]["properties"]) == {"max-file-bytes", "max-appended-entries"}


def test_this_repository_configuration_and_a_full_one_load(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parent.parent
    assert load_config(root).section("sweep")["model-cache"] == "/mnt/models/huggingface"
    (tmp_path / ".ci-tools.yaml").write_text(
        "master-configs: configs/*-master.yaml\nserver-patterns: [vllm serve]\nrouter-patterns: [my-router]\n"
        "recipe-templates: {multinode: ['m/{model_prefix}.sh']}\n"
        "limits: {max-file-bytes: 1048576, max-appended-entries: 5}\n"
        "claims:\n  replace-default-vocabulary: false\n  vocabulary:\n    TBO: --enable-tbo\n"
        "    MTP: {subject: [--speculative-num-steps], true-words: [golden]}\n  abbreviations: {EQUIV: equivalence}\n"
        "dispatch: {min-permission: maintain, allow-users: [octocat], allow-forks: false, workflow: 1234, ref: main, max-jobs: 64}\n"
        "sweep: {launchers: {'h100-*': slurm}, default-launcher: direct, grace-seconds: 5, srun-args: [--exclusive]}\n")
    cfg = load_config(tmp_path)
    assert cfg.master_configs == ("configs/*-master.yaml",) and cfg.multinode_templates == ("m/{model_prefix}.sh",)
    assert cfg.server_patterns == ("vllm serve",) and cfg.router_patterns == ("my-router",)
    assert cfg.section("limits")["max-appended-entries"] == 5


@pytest.mark.parametrize("command", [["validate"], ["matrix"], ["changelog", "new", "-m", "x", "--key", "k"]])
def test_a_nested_typo_fails_any_command_with_file_and_line(command: list[str], tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    from ci_tools.cli.main import main

    (tmp_path / ".ci-tools.yaml").write_text("claims:\n  abbreviatons: {EQUIV: equivalence}\n")
    code = main([*command, "--repo", str(tmp_path)])
    captured = capsys.readouterr()
    assert (code, captured.out) == (2, "")
    assert f"{tmp_path / '.ci-tools.yaml'}:2: unknown setting `claims.abbreviatons`, expected one of: vocabulary," in captured.err


def test_an_old_revisions_layout_is_used_only_for_paths_the_file_does_not_set(tmp_path: Path) -> None:
    from ci_tools.config import layout_at

    old = {".github/configs/*-master.yaml": [".github/configs/amd-master.yaml"]}
    default = load_config(tmp_path)
    moved = layout_at(default, lambda p: old.get(p, []))
    assert (moved.master_configs, moved.runners) == ((".github/configs/*-master.yaml",), ".github/configs/runners.yaml")
    assert layout_at(default, lambda p: ["configs/a-master.yaml"] if p == "configs/*-master.yaml" else []) is default
    (tmp_path / ".ci-tools.yaml").write_text("master-configs: [cfg/*-master.yaml]\n", encoding="utf-8")
    assert layout_at(load_config(tmp_path), lambda p: old.get(p, [])).master_configs == ("cfg/*-master.yaml",)
