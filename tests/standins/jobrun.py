"""One matrix job run for real: the workflow's launch step in bash, in a sandbox, with the stand-ins on PATH.

What the GitHub runner gives the launch step is rebuilt here: the
environment ``ci-tools matrix --env`` derives from the workflow, with the
runner's name known (so ``RESULT_FILENAME`` and what the step exports are
too), the runner's own variables (``GITHUB_WORKSPACE``, ``HOME``, ``USER``,
``GITHUB_ACTIONS`` ...), a token where the workflow passes a secret, and the
checkout at ``/home/runner/work/InferenceX/InferenceX`` as the working
directory.  Then the launch step's own script runs (read from the job's
workflow template, its ``${{ inputs.* }}`` filled in), under ``bash -eo
pipefail`` as GitHub's ``shell: bash`` runs it, followed by the "Process
result" step (``python3 utils/process_result.py``) where the template runs it.

The checkout is the repository read-only with the job's writes kept apart (an
overlay), so ``server.log``, ``$RESULT_FILENAME.json`` and ``agg_*.json`` are
found afterwards in ``JobRun.written``.  The node is the job's: its name is the
first node of the job's runner label (runners.yaml) whose fleet's launcher
picks the job's recipe, its GPUs the fleet's vendor, and the directories its
launcher names (squash-file and model caches) exist, empty.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from ci_tools.config import ProjectConfig
from ci_tools.jobs.env.contract import contract_for
from ci_tools.jobs.job import AGENTIC, Job
from ci_tools.jobs.resolution import fleet_of, resolver_for
from ci_tools.revision.snapshot import Snapshot

from standins.install import install
from standins.record import Call, read_calls
from standins.sandbox import Sandbox, run_sandboxed

WORKSPACE = "/home/runner/work/InferenceX/InferenceX"
IMAGE_FILES = Path(__file__).resolve().parent / "image-files"  # what the stand-in images hold of the real ones
SGLANG_WORKSPACE = "/sgl-workspace"
STANDINS = "/standins"
PROFILE_D = Path("/etc/profile.d")  # what /etc/profile sources last
PATH = f"{STANDINS}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SECRET = "standin-secret"  # what a secret the workflow passes holds (HF_TOKEN, ...)
_LAUNCHER_CALL = re.compile(r"^[ \t]*bash[ \t]+\./runners/launch_", re.M)
_INPUT = re.compile(r"\$\{\{\s*inputs\.([A-Za-z0-9_-]+)\s*\}\}")
_GPU_NAMES = {"mi355x": "AMD Instinct MI355X", "mi325x": "AMD Instinct MI325X", "mi300x": "AMD Instinct MI300X",
              "h100": "NVIDIA H100 80GB HBM3", "h200": "NVIDIA H200", "b200": "NVIDIA B200",
              "b300": "NVIDIA B300 SXM6 AC", "gb200": "NVIDIA GB200", "gb300": "NVIDIA GB300",
              "rtx6000pro": "NVIDIA RTX PRO 6000 Blackwell Server Edition"}


@dataclass
class JobRun:
    job: Job
    node: str
    env: dict[str, str]  # what the launch step started with
    exported: dict[str, str]  # what the launch step's script exports before the launcher (RESULT_FILENAME ...)
    exit_code: int
    seconds: float
    calls: list[Call]
    written: Path  # the files the job wrote into the checkout (its overlay's upper layer)
    output: Path  # the steps' stdout and stderr

    def servers(self, patterns: tuple[str, ...]) -> list[tuple[Call, str, tuple[str, ...]]]:
        """Each server started (a launch of one of ``patterns``): the call, its pattern, the words after it."""
        out = []
        for call in self.calls:
            found = call.launched(patterns)
            if found is not None:
                out.append((call, *found))
        return out

    def diagnosis(self, lines: int = 40) -> str:
        """Where the job stood when it ended: its exit status, the last stand-in programs it ran and the tails of
        its output and of the Slurm job logs it wrote (a job ended at its timeout printed nothing of its own when
        its output was still buffered)."""
        parts = [f"exit {self.exit_code} after {self.seconds:.1f} s; last programs run:"]
        parts += [f"  {' '.join(call.argv)[:200]}" for call in self.calls[-8:]]
        for path in [self.output, *sorted(self.written.rglob("slurm_job-*.out"))]:
            if path.is_file():
                tail = path.read_text(errors="replace").splitlines()[-lines:]
                parts += [f"--- {path.name} (last {len(tail)} lines)", *tail]
        return "\n".join(parts)

    def clients(self) -> list[Call]:
        return [c for c in self.calls if c.is_client()]

    def result_file(self) -> Path | None:
        """``$RESULT_FILENAME.json`` in the checkout, where the launch step looks for it (run through
        ``sweep run``: in the job's result directory, where it moves what the upload steps keep)."""
        name = self.exported.get("RESULT_FILENAME") or self.env.get("RESULT_FILENAME")
        if not name:
            return None
        for path in (self.written / f"{name}.json", *self.written.glob(f"sweep-results/*/results/{name}.json")):
            if path.is_file():
                return path
        return None


_ABSOLUTE = re.compile(r"(?<![\w$}.:/-])(/[A-Za-z0-9_@+-][A-Za-z0-9_.@+/-]*)")
# Directories of every machine (or the container's side of a mount): never made as the node's.
_SYSTEM = {"dev", "proc", "sys", "tmp", "usr", "bin", "sbin", "lib", "lib64", "etc", "run", "workspace", "root",
           "opt", "boot", "ix", "sgl-workspace"}
_FILE = re.compile(r"\.(sqsh|lock|sh|py|json|ya?ml|txt|log|csv|out|err|tar|gz|env|conf)$")


def node_dirs(launcher: str) -> tuple[str, ...]:
    """Directories a fleet's nodes have because its launcher names them (squash caches, model stores, shares):
    every absolute path the launcher spells without a variable, the directory of one that names a file."""
    found = set()
    for path in _ABSOLUTE.findall(launcher):
        path = path.rstrip("/")
        parts = path.split("/")
        if len(parts) < 3 or parts[1] in _SYSTEM or any(len(p) < 2 or p.isupper() for p in parts[1:]):
            continue  # a directory of every machine, a sed expression (s/_/g, /NAME/d)
        if _FILE.search(parts[-1]):
            path = "/".join(parts[:-1])
        if path.count("/") >= 2:
            found.add(path)
    return tuple(sorted(found))


def restore_links(repo_root: Path, layer: Path) -> None:
    """Put back, in the job's layer of the checkout, the symbolic links a copy of the tree holds as text.

    tests/data/inferencex-843c625 stores InferenceX's ``runners/launch_b200-dgxc-slurm.sh`` (a link to
    ``launch_b200-dgxc.sh``) as a file holding the target's name; a checkout has the link.
    """
    for launcher in (repo_root / "runners").glob("launch_*.sh"):
        if launcher.is_symlink() or launcher.stat().st_size > 200:
            continue
        target = launcher.read_text(errors="replace").strip()
        if re.fullmatch(r"launch_[\w.-]+\.sh", target) and (launcher.parent / target).is_file():
            link = layer / "runners" / launcher.name
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(target)


def node_for(job: Job, config: ProjectConfig, snapshot: Snapshot, guess: bool = False) -> str | None:
    """The runner node a job gets: the first node of its label in the first fleet whose launcher picks its recipe.

    ``guess``: for a label that names neither (a revision whose runners file lacks it), the first fleet of
    the label's GPU (``b200-dsv4``: ``b200-cw``), by launcher name.
    """
    resolver = resolver_for(config, snapshot)
    resolution = resolver(job)
    label = str(job.fields.get("runner"))
    fleets = resolution.fleets or resolver.fleets(label)
    for fleet in fleets:
        node = resolver.node_of(label, fleet)
        if node is not None:
            return node
    # A label runners.yaml does not define: a node of the fleet it names, when that fleet has a launcher.
    named = label.removeprefix("cluster:")
    if snapshot.read(f"runners/launch_{named}.sh") is not None:
        return f"{named}_00"
    if guess:
        gpu = named.split("-", 1)[0]
        launchers = sorted(f for f in snapshot.files() if re.fullmatch(rf"runners/launch_{re.escape(gpu)}-[\w.-]+\.sh", f))
        if launchers:
            return launchers[0].removeprefix("runners/launch_").removesuffix(".sh") + "_00"
    return None


def job_env(job: Job, node: str, config: ProjectConfig, snapshot: Snapshot) -> tuple[dict[str, str], dict[str, str]]:
    """The launch step's environment on ``node`` (the workflow's, the runner's, secrets filled in), and what
    its script exports before it starts the launcher (``RESULT_FILENAME``, ``GPU_COUNT``), as ci-tools reads it."""
    contract = contract_for(config, snapshot)
    workflow = contract.workflow_env(job, {"name": node})
    caller = contract.caller_for(job)
    step = caller.template.launch if caller is not None else None
    exported = {name: var.value or "" for name, var in workflow.items()
                if step is not None and var.origin == step.origin}
    env = {"PATH": PATH, "HOME": "/home/runner", "USER": "runner", "LOGNAME": "runner", "SHELL": "/bin/bash",
           "LANG": "C.UTF-8", "CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": WORKSPACE,
           "RUNNER_OS": "Linux", "RUNNER_ARCH": "X64", "RUNNER_TEMP": "/home/runner/work/_temp",
           "GITHUB_ENV": "/home/runner/work/_temp/github_env", "GITHUB_OUTPUT": "/home/runner/work/_temp/github_output",
           "GITHUB_REPOSITORY": "SemiAnalysisAI/InferenceX", "GITHUB_RUN_ID": "1", "GITHUB_RUN_ATTEMPT": "1"}
    for name, var in workflow.items():
        if name not in exported:
            env[name] = var.value if var.value is not None else SECRET
    return env, exported


def _inputs(job: Job) -> dict[str, str]:
    eval_only = bool(job.fields.get("eval-only", False))
    return {"eval-only": "true" if eval_only else "false",
            "scenario-type": AGENTIC if job.scenario == AGENTIC else "fixed-seq-len"}


def launch_steps(job: Job, config: ProjectConfig, snapshot: Snapshot, process: bool = True) -> str:
    """The bash the runner runs: the template's launch step, then (``process``) its "Process result" step
    where the template runs it."""
    caller = contract_for(config, snapshot).caller_for(job)
    if caller is None:
        raise ValueError(f"{job.label()}: no job of the sweep workflow runs it")
    path = caller.template.path
    steps = _steps(snapshot.read(path) or b"")
    launch = next(s["run"] for s in steps if isinstance(s.get("run"), str) and _LAUNCHER_CALL.search(s["run"]))
    inputs = _inputs(job)

    def fill(text: str) -> str:
        filled = _INPUT.sub(lambda m: inputs[m.group(1)], text)
        if "${{" in filled:
            raise ValueError(f"{path}: an expression the harness does not fill in: "
                             f"{filled[filled.index('${{'):][:60]}")
        return filled

    script = f"bash --noprofile --norc -eo pipefail -c {_quote(fill(launch))}"
    if process and inputs["eval-only"] == "false" and inputs["scenario-type"] != AGENTIC and any(
            s.get("name") == "Process result" for s in steps):
        process = next(s["run"] for s in steps if s.get("name") == "Process result")
        # What a step appends to $GITHUB_ENV is the environment of the steps after it.
        script += (' && while IFS= read -r line; do export "$line"; done < "$GITHUB_ENV"'
                   f" && bash --noprofile --norc -eo pipefail -c {_quote(fill(process))}")
    return 'mkdir -p "$RUNNER_TEMP" && : > "$GITHUB_ENV" && ' + script


@lru_cache(maxsize=8)
def _steps(template: bytes) -> tuple[dict, ...]:  # type: ignore[type-arg]
    """The steps of a workflow template's jobs, read once per template (15 ms of YAML a job otherwise)."""
    data = yaml.safe_load(template)
    return tuple(s for job_ in (data.get("jobs") or {}).values() for s in (job_.get("steps") or [])
                 if isinstance(s, dict))


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


STEP, SWEEP = "step", "sweep"
SWEEP_RESULTS = f"{WORKSPACE}/sweep-results"


def sweep_command(job: Job) -> list[str]:
    """``ci-tools sweep run`` of one job with the repository's launcher, as a runner of the sweep workflow runs it
    (this interpreter's ci-tools; its results under the checkout, so they outlive the sandbox)."""
    command = [sys.executable, "-m", "ci_tools", "sweep", "run", "--repo", WORKSPACE, "--job",
               json.dumps(job.to_json()), "--result-dir", SWEEP_RESULTS, "--launcher", "repository", "--quiet"]
    # The sweep workflow passes a single-node entry's run-eval on; a multinode entry's throughput job runs
    # without evals (its evals are a job of their own, `multinode_evals`).
    return command + (["--run-eval"] if job.fields.get("run-eval") and not job.multinode else [])


def run_job(job: Job, config: ProjectConfig, snapshot: Snapshot, repo_root: Path, scratch: Path, *,
            node: str | None = None, timeout: float = 60.0, process: bool = True, through: str = STEP,
            trace: tuple[str, ...] = ()) -> JobRun:
    """Run ``job`` for real in a sandbox under ``scratch`` (an empty directory).

    ``through``: STEP runs the workflow's launch step in bash (the template's own script), SWEEP runs
    ``ci-tools sweep run`` (which runs the fleet's launcher as that step does; about 0.5 s more CPU a job,
    ci-tools' own start).  ``process``: with STEP, run the "Process result" step too (InferenceX's
    utils/process_result.py, the costliest program of a job: with the workflow's PYTHONDONTWRITEBYTECODE it
    compiles its modules each time).  ``trace``: words put before the command inside the sandbox
    (``perf record -o /standins/perf.data --``).
    """
    node = node or node_for(job, config, snapshot)
    if node is None:
        raise ValueError(f"{job.label()}: its runner label has no node in runners.yaml and names no launcher")
    fleet = fleet_of(node)
    gpu = fleet.split("-")[0]
    standins = install(scratch / "standins", vendor="amd" if gpu.startswith("mi") else "nvidia",
                       gpu_name=_GPU_NAMES.get(gpu))
    env, exported = job_env(job, node, config, snapshot)
    written = scratch / "written"
    restore_links(repo_root, written)
    launcher = repo_root / "runners" / f"launch_{fleet}.sh"
    dirs = node_dirs(launcher.read_text(errors="replace")) if launcher.exists() else ()
    if job.multinode:
        # A multinode job checks its model on every node before it starts a server: the model's directory in
        # each store the launcher names (a single-node recipe downloads it, or the launcher mounts the store).
        model = str(job.fields.get("model", "")).rstrip("/").rpartition("/")[2]
        dirs = (*dirs, *(f"{d}/{model}" for d in dirs if model))
    overlays = {WORKSPACE: (repo_root, written)}
    if "sglang" in str(job.fields.get("image", "")):
        # Files of the SGLang image that recipes read or patch before the server starts, in a layer of the job's.
        overlays[SGLANG_WORKSPACE] = (IMAGE_FILES / SGLANG_WORKSPACE.lstrip("/"), scratch / "image-layer")
    if PROFILE_D.is_dir():
        # A login shell (`srun ... bash -lc`, the AMD multinode chain) resets PATH in /etc/profile; on a real
        # node docker and sudo are in the directories it sets, here the node's programs are the stand-ins.
        layer = scratch / "profile-layer"
        layer.mkdir()
        (layer / "zz-standins.sh").write_text(f"PATH={STANDINS}/bin:$PATH\n")
        overlays[str(PROFILE_D)] = (PROFILE_D, layer)
    sandbox = Sandbox(scratch / "sandbox", binds={STANDINS: standins}, overlays=overlays, hostname=node, dirs=dirs,
                      tmp_in_memory=True)
    output = scratch / "output.log"
    start = time.monotonic()
    if through == SWEEP:
        runner = {k: env[k] for k in ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "CI", "GITHUB_ACTIONS",
                                       "RUNNER_OS", "RUNNER_ARCH", "RUNNER_TEMP", "GITHUB_REPOSITORY")}
        command = sweep_command(job)
        env = {**runner, "RUNNER_NAME": node, "HF_TOKEN": SECRET}
    else:
        command = ["bash", "--noprofile", "--norc", "-c", launch_steps(job, config, snapshot, process)]
    code = run_sandboxed(sandbox, [*trace, *command], env, WORKSPACE, timeout=timeout, output=output)
    seconds = time.monotonic() - start
    shutil.rmtree(scratch / "sandbox", ignore_errors=True)
    return JobRun(job, node, env, exported, code, seconds, read_calls(standins / "log"), written, output)
