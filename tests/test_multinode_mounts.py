"""A file a chain script writes with a here-document, mounted into the container by ``docker run -v``, and
sourced there: small scripts run by the real chain interpreter, then the real tree's AMD SGLang jobs, whose
``env.sh`` sources the HiCache/Mooncake settings ``job.slurm`` writes to ``/config/hicache_mc.env``."""

from __future__ import annotations

from pathlib import Path

from ci_tools.config import ProjectConfig
from ci_tools.evaluation.multinode.chain import ChainInterpreter
from ci_tools.evaluation.multinode.docker_mounts import MountedFile, mounted_files
from ci_tools.revision.snapshot import WorkTreeSnapshot
from ci_tools.shell.model import Value
from ci_tools.shell.parse import parse_script
from multinode_corpus import evaluations, flag, role_env, role_flags

JOB = "job.sh"
# The job id is unknown, so the written file's path is too: it is matched by the variable that holds it.
SUBMIT = """\
LOGS=/shared/logs
CONFIG="${LOGS}/settings_${SLURM_JOB_ID}.env"
PAGE=256
cat > "$CONFIG" <<EOF
PAGE_SIZE=${PAGE}
RATIO=${RATIO:-}
ID=${SLURM_JOB_ID}
EOF
srun --nodelist="$NODES" bash -lc "
\\$DOCKER_CMD run --rm \\
    -v ${CONFIG}:/config/settings.env:ro \\
    --volume /never/written.env:/config/other.env \\
    -v \\$HOME/.ssh:/root/.ssh \\
    image bash -lc 'server.sh'
"
"""
CONTAINER = """\
if [[ -f /config/settings.env ]]; then
    set -a
    source /config/settings.env
    set +a
fi
LOCAL_ONLY=1
"""


def _interp(tmp_path: Path, path: str) -> ChainInterpreter:
    return ChainInterpreter(path, ProjectConfig(root=tmp_path), WorkTreeSnapshot(tmp_path))


def _submitted(tmp_path: Path) -> ChainInterpreter:
    interp = _interp(tmp_path, JOB)
    interp.run(parse_script(JOB, SUBMIT.encode()))
    return interp


def _in_container(tmp_path: Path, files: dict[str, MountedFile], text: str = CONTAINER) -> ChainInterpreter:
    inside = _interp(tmp_path, "server.sh")
    inside.mounted = files
    inside.run(parse_script("server.sh", text.encode()))
    return inside


def test_docker_run_mounts_in_the_srun_string_are_kept_with_the_host_path_of_the_submitting_script(
        tmp_path: Path) -> None:
    interp = _submitted(tmp_path)
    mounts = {m.target: m for m in interp.container_mounts}
    # `-v \$HOME/...` is expanded on the node, not by the submitting script: not taken
    assert sorted(mounts) == ["/config/other.env", "/config/settings.env"]
    settings = mounts["/config/settings.env"]
    assert settings.read_only and not mounts["/config/other.env"].read_only
    assert settings.host.text is None and settings.host.location.line == 2  # the binding of CONFIG
    assert mounts["/config/other.env"].host.text == "/never/written.env"
    assert settings.location.path == JOB and settings.location.line == 9


def test_a_mounted_file_the_chain_wrote_is_sourced_in_the_container_each_value_at_its_heredoc_line(
        tmp_path: Path) -> None:
    interp = _submitted(tmp_path)
    files = mounted_files(interp.container_mounts, interp.state.files)
    content = files["/config/settings.env"].content
    # expanded when written: PAGE known, RATIO empty, the job id unknown (so the whole text is, but its parts not)
    assert content is not None and content.text is None
    assert "".join(p.text if p.text is not None else "?" for p in content.parts) == "PAGE_SIZE=256\nRATIO=\nID=?\n"
    inside = _in_container(tmp_path, files)
    values = {k: v for k, v in inside.state.vars.items() if isinstance(v, Value)}
    assert (values["PAGE_SIZE"].text, values["PAGE_SIZE"].location.path, values["PAGE_SIZE"].location.line) == (
        "256", JOB, 5)
    assert (values["RATIO"].text, values["RATIO"].location.line) == ("", 6)
    assert values["ID"].text is None
    # `set -a` exported what the file assigned, and only while it was on
    assert {"PAGE_SIZE", "RATIO", "ID"} <= inside.state.exported and "LOCAL_ONLY" not in inside.state.exported
    assert inside.errors == []


def test_without_set_a_the_sourced_names_are_not_exported(tmp_path: Path) -> None:
    interp = _submitted(tmp_path)
    files = mounted_files(interp.container_mounts, interp.state.files)
    inside = _in_container(tmp_path, files, "source /config/settings.env\n")
    page = inside.state.vars["PAGE_SIZE"]
    assert isinstance(page, Value) and page.text == "256"
    assert "PAGE_SIZE" not in inside.state.exported


def test_a_mounted_host_file_the_chain_never_wrote_stays_unknown_and_says_why(tmp_path: Path) -> None:
    interp = _submitted(tmp_path)
    files = mounted_files(interp.container_mounts, interp.state.files)
    assert files["/config/other.env"].content is None
    inside = _in_container(tmp_path, files, "[[ -f /config/other.env ]] && X=1\nsource /config/other.env\n")
    # docker makes a directory of a missing host path: whether it is a file is not known
    x = inside.state.vars.get("X")
    assert isinstance(x, Value) and x.conditional
    assert inside.errors == [
        "server.sh:2: cannot resolve `source /config/other.env`: it is mounted from /never/written.env "
        "(job.sh:9), a file this chain does not write; what it defines is unknown"]


def test_amd_sglang_disagg_jobs_source_job_slurm_s_hicache_settings() -> None:
    jobs = [(j, r) for j, r in evaluations() if "mi355x-sglang-disagg" in j.config_key]
    assert len(jobs) == 46
    assert [r.errors for _, r in jobs if r.errors] == []
    hicache = [(j, r) for j, r in jobs if "hicache" in j.config_key]
    assert hicache, "the tree has dsv4 agentic HiCache jobs"
    for j, r in jobs:
        env = role_env(r, "prefill")
        ratio = env["HICACHE_RATIO"] if (j, r) not in hicache else None
        if ratio is not None:
            # the job sets nothing: job.slurm wrote `HICACHE_RATIO=${HICACHE_RATIO:-}`, empty, at its line 540
            assert (ratio.text, ratio.location.path, ratio.location.line) == (
                "", "benchmarks/multi_node/amd_utils/job.slurm", 540)
    job, result = hicache[0]
    prefill = role_flags(result, "prefill")
    # the recipe's HICACHE_PAGE_SIZE=256 reaches server_sglang.sh through the file (not its default of 1)
    pages = [f for f in prefill if f.name == "--page-size"]
    assert [p.value.text for p in pages if p.value is not None] == ["256", "256"]
    written = pages[-1].value
    assert written is not None and (written.location.path, written.location.line) == (
        "benchmarks/multi_node/amd_utils/job.slurm", 543)
    # FORCE_HICACHE_RATIO=1: the ratio-based pool with the recipe's ratio 3, layout page_first (tier L2)
    assert flag(prefill, "--hicache-ratio").value.text == "3"  # type: ignore[union-attr]
    assert flag(prefill, "--hicache-mem-layout").value.text == "page_first"  # type: ignore[union-attr]
    assert flag(prefill, "--hicache-storage-prefetch-policy").value.text == "best_effort"  # type: ignore[union-attr]
    env = role_env(result, "prefill")
    assert env["MC_PATCH_HOSTPOOL"].text == "1" and env["MC_PATCH_HOSTPOOL"].location.line == 549
