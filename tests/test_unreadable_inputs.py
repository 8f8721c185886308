"""Every command that cannot read an input it needs says so: one finding at file:line and exit 1, never
silence, never an internal error, never a run that grows without bound.

The tree is the real InferenceX tree with each master file cut to its first configs
(:func:`fuzzing.make_tree`), committed once per session and cloned per test.
"""

from __future__ import annotations

import resource
import shutil
import time
from pathlib import Path

import pytest

from ci_tools.cli.main import main
from fuzzing import clone, make_tree
from test_changelog_support import clear_github_env

AMD = "configs/amd-master.yaml"
SRT = "benchmarks/multi_node/srt-slurm-recipes/sglang/deepseek-v4/8k1k/disagg-b200-low-latency-1p1d-tp8-tp8-mtp.yaml"
SRT_KEY = "dsv4-fp4-b200-dynamo-sglang-mtp"
BOMB = ['lol0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]',
        *(f"lol{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 10))]


@pytest.fixture(scope="session")
def trimmed_origin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tree(tmp_path_factory.mktemp("unreadable") / "origin", keep_configs=6)


@pytest.fixture
def repo(trimmed_origin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    clear_github_env(monkeypatch)
    dest = clone(trimmed_origin, tmp_path / "ix")
    monkeypatch.chdir(dest)
    return dest


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _replace(repo: Path, rel: str, old: str, new: str) -> int:
    """Replace the first ``old`` in ``rel``; returns the line it was on."""
    text = (repo / rel).read_text(encoding="utf-8")
    at = text.index(old)
    (repo / rel).write_text(text[:at] + new + text[at + len(old):], encoding="utf-8")
    return text[:at].count("\n") + 1


def test_recipe_lint_names_a_master_config_that_does_not_parse(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: an unterminated string in configs/amd-master.yaml, and `recipe lint` printed nothing, exit 0."""
    line = _replace(repo, AMD, "image: lmsysorg", 'image: "lmsysorg')
    code, out = cli(capsys, "recipe", "lint")
    assert code == 1
    assert f"{AMD}:" in out and "invalid YAML" in out and "[yaml-syntax]" in out
    assert int(out.split(f"{AMD}:")[1].split(":")[0]) >= line


def test_claims_names_an_appended_entry_that_does_not_parse(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: `claims --base base` over an appended entry that is not YAML printed nothing, exit 0."""
    with (repo / "perf-changelog.yaml").open("a", encoding="utf-8") as out:
        out.write('\n- config-keys: [dsr1-fp4-mi355x-sglang]\n  description: ["a: b\n  pr-link: x\n')
    code, out = cli(capsys, "claims", "--base", "base")
    assert code == 1
    assert "perf-changelog.yaml:" in out and "[yaml-syntax]" in out


@pytest.mark.parametrize(("old", "new", "message"), [
    ("tp: 8, conc-start: 4", 'tp: "x", conc-start: 4', '`tp` must be an integer, found the string "x"'),
    ("tp: 8, conc-start: 4", "tp: 8, conc-start: [1]", "`conc-start` must be an integer, found a list"),
    ("tp: 8, conc-start: 4", "tp: 8.0, conc-start: 4", "`tp` must be an integer, found the number 8.0"),
])
def test_matrix_refuses_a_config_of_the_wrong_type(repo: Path, capsys: pytest.CaptureFixture[str], old: str, new: str,
                                                   message: str) -> None:
    """Before: exit 0 and jobs built from the bad value (`"tp": "x"` in the matrix)."""
    line = _replace(repo, AMD, old, new)
    code, out = cli(capsys, "matrix")
    assert code == 1
    assert f"{AMD}:{line}:" in out and message in out and "[config-schema]" in out
    assert "ci-tools: error: the matrix cannot be built while 1 input problem(s) remain" in out
    assert '"include"' not in out


def test_a_set_is_a_finding_at_its_line_not_an_internal_error(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: `num-worker: !!set {a, b}` ended check, recipe lint and matrix with exit 3 (unhashable type: 'set')."""
    text = (repo / "configs/nvidia-master.yaml").read_text(encoding="utf-8")
    assert "num-worker: 1" in text
    line = _replace(repo, "configs/nvidia-master.yaml", "num-worker: 1", "num-worker: !!set {a, b}")
    for argv in (("check", "--base", "base"), ("recipe", "lint"), ("matrix",), ("validate",)):
        code, out = cli(capsys, *argv)
        assert code == 1, (argv, out)
        assert f"configs/nvidia-master.yaml:{line}:" in out and "`!!set` makes a set" in out, (argv, out)
        assert "internal error" not in out


def _bounded(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, float, int]:
    before_cpu = time.process_time()
    before_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    code, out = cli(capsys, *argv)
    return code, out, time.process_time() - before_cpu, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before_rss


def test_an_alias_bomb_in_a_master_config_is_one_finding_at_once(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: nested anchors ("billion laughs") made these grow past 4 GiB in about 40 s."""
    text = (repo / AMD).read_text(encoding="utf-8")
    first = text.index("\n") + 1
    (repo / AMD).write_text(text[:first] + "".join(f"  x-{line}\n" for line in BOMB) + text[first:], encoding="utf-8")
    for argv in (("validate",), ("check", "--base", "base"), ("matrix",), ("recipe", "lint")):
        code, out, cpu, grown_kib = _bounded(capsys, *argv)
        assert code == 1, (argv, out)
        assert f"{AMD}:" in out and "an alias bomb" in out, (argv, out)
        assert cpu < 5 and grown_kib < 200 * 1024, argv


def test_an_alias_bomb_in_an_srt_slurm_recipe_is_a_recipe_finding(trimmed_origin: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: `recipe lint` grew past 4 GiB; then (with the loader bounded) printed nothing, exit 0."""
    from conftest import full_corpus_dir

    dest = clone(trimmed_origin, tmp_path / "ix")
    monkeypatch.chdir(dest)
    # Only the config whose job reads the recipe: a small run.
    nvidia = (full_corpus_dir() / "configs/nvidia-master.yaml").read_text(encoding="utf-8").split("\n")
    start = nvidia.index(f"{SRT_KEY}:")
    end = next(i for i in range(start + 1, len(nvidia)) if nvidia[i] and not nvidia[i][0].isspace())
    (dest / "configs/nvidia-master.yaml").write_text("\n".join(nvidia[start:end]) + "\n", encoding="utf-8")
    (dest / AMD).unlink()
    with (dest / SRT).open("a", encoding="utf-8") as out:
        out.write("\n".join(BOMB) + "\n")
    code, out, cpu, grown_kib = _bounded(capsys, "recipe", "lint")
    assert code == 1
    assert f"{SRT}:" in out and "an alias bomb" in out and "[recipe-syntax]" in out
    assert cpu < 10 and grown_kib < 200 * 1024


def test_a_link_out_of_the_repository_is_never_followed(repo: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A pull request can commit `configs/runners.yaml -> /home/runner/.ssh/id_rsa`: never read, never shown."""
    secret = tmp_path / "secret.yaml"
    secret.write_text("labels: {secret-text-7c1: [secret-text-7c1]}\n", encoding="utf-8")
    (repo / "configs/runners.yaml").unlink()
    (repo / "configs/runners.yaml").symlink_to(secret)
    for argv in (("validate",), ("recipe", "lint"), ("matrix",)):
        code, out = cli(capsys, *argv)
        assert code == 1, (argv, out)
        assert "configs/runners.yaml is a symbolic link that leads out of the repository" in out
        assert "secret-text-7c1" not in out
    (repo / "perf-changelog.yaml").unlink()
    (repo / "perf-changelog.yaml").symlink_to(secret)
    code, out = cli(capsys, "changelog", "new", "--key", "dsr1-fp4-mi355x-sglang", "-m", "x")
    assert code == 2 and "leads out of the repository" in out
    assert secret.read_text(encoding="utf-8") == "labels: {secret-text-7c1: [secret-text-7c1]}\n"


def test_the_fuzzer_tree_is_the_real_one(trimmed_origin: Path) -> None:
    """The cut tree keeps the real files byte for byte, except the master files cut at a config boundary."""
    from conftest import full_corpus_dir

    for rel in ("configs/runners.yaml", "perf-changelog.yaml", SRT):
        assert (trimmed_origin / rel).read_bytes() == (full_corpus_dir() / rel).read_bytes()
    cut = (trimmed_origin / AMD).read_text(encoding="utf-8")
    assert (full_corpus_dir() / AMD).read_text(encoding="utf-8").startswith(cut.rstrip("\n"))
    assert shutil.which("git")
