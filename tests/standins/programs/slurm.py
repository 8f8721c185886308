"""Slurm's srun with pyxis' ``--container-*`` options, and sbatch (the other Slurm stand-ins are bash: shims/).

``srun --container-image=...`` runs its command as a container (container.py)
in a job step: ``--jobid``, else the allocation around it, else a job of its
own; ``--export`` decides the environment (``ALL`` and additions by default),
with the step's ``SLURM_*`` variables.  ``sbatch`` runs the batch script in
the background (its ``#SBATCH`` lines and options read for the job name and
output files) and prints ``Submitted batch job N``; the job ends with the
script.  Jobs are the directories shims/slurm-lib.sh keeps.
"""

from __future__ import annotations

import os
import sys
from typing import Callable

from common import Node, machine_name, node_address, node_names
from container import ContainerRun, image_env, parse_mounts, run

# Options taking a value when written as two words (`-J name`, `--jobid 12`): shims/slurm-lib.sh's list.
_VALUE_OPTIONS = {"-A", "-c", "-C", "-d", "-D", "-e", "-G", "-i", "-J", "-L", "-m", "-n", "-N", "-o", "-p", "-q",
                  "-t", "-w", "-x", "--account", "--begin", "--chdir", "--constraint", "--cpus-per-task",
                  "--dependency", "--error", "--export", "--gpus", "--gpus-per-node", "--gres", "--input",
                  "--job-name", "--jobid", "--mem", "--mpi", "--nodelist", "--nodes", "--ntasks",
                  "--ntasks-per-node", "--output", "--partition", "--qos", "--time", "--exclude", "--reservation",
                  "--container-image", "--container-mounts", "--container-workdir", "--container-name",
                  "--container-env", "--cpu-bind", "--distribution", "--comment", "--mem-per-cpu", "--mem-per-gpu",
                  "--gpus-per-task", "--network"}
_SHORT = {"-J": "--job-name", "-N": "--nodes", "-n": "--ntasks", "-p": "--partition", "-o": "--output",
          "-e": "--error", "-t": "--time", "-w": "--nodelist", "-A": "--account", "-c": "--cpus-per-task",
          "-D": "--chdir", "-x": "--exclude", "-G": "--gpus"}


def parse_options(args: list[str]) -> tuple[dict[str, str], list[str]]:
    """Slurm options by long name (``=`` or two words; switches as "") and the command after them."""
    options: dict[str, str] = {}
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "--":
        name, eq, value = args[i].partition("=")
        if eq:
            i += 1
        elif name in _VALUE_OPTIONS:
            value = args[i + 1] if i + 1 < len(args) else ""
            i += 2
        else:
            value = ""
            i += 1
        options[_SHORT.get(name, name)] = value
    if i < len(args) and args[i] == "--":
        i += 1
    return options, args[i:]


class Jobs:
    """The stand-in Slurm jobs: directories ``state/slurm/<id>/`` (shims/slurm-lib.sh keeps the same layout)."""

    def __init__(self, node: Node) -> None:
        self.dir = os.path.join(node.state, "slurm")

    def new(self, name: str, nodes: int = 1) -> str:
        os.makedirs(self.dir, exist_ok=True)
        job = 1000
        while True:
            try:
                os.mkdir(os.path.join(self.dir, str(job)))
                break
            except FileExistsError:
                job += 1
        for item, text in (("name", name), ("user", os.environ.get("USER") or "root"), ("nodes", str(nodes)),
                           ("nodelist", ",".join(node_names(nodes))), ("running", "")):
            with open(os.path.join(self.dir, str(job), item), "w") as f:
                f.write(text)
        return str(job)

    def end(self, job: str) -> None:
        try:
            os.unlink(os.path.join(self.dir, job, "running"))
        except FileNotFoundError:
            pass


def _job_nodes(jobs: Jobs, job: str) -> list[str]:
    """The nodes of a job (its ``nodelist``; a job made elsewhere: this machine)."""
    try:
        with open(os.path.join(jobs.dir, job, "nodelist")) as f:
            return [n for n in f.read().strip().split(",") if n] or [machine_name()]
    except OSError:
        return [machine_name()]


def _step_nodes(options: dict[str, str], nodes: list[str], in_job: bool) -> list[str]:
    """A step's nodes, as shims/srun.sh picks them: those named, else the first ``--nodes`` of the job's,
    else as many as tasks asked (one task per node), else, in a job that exists, all of them (srun's
    default), else the first."""
    if options.get("--nodelist"):
        return options["--nodelist"].split(",")
    count_text = options.get("--nodes", "").split("-")[0] or options.get("--ntasks", "") or (
        str(len(nodes)) if in_job else "1")
    count = int(count_text) if count_text.isdigit() else 1
    return nodes[:max(1, min(count, len(nodes)))]


def _job_env(job: str, name: str, names: list[str]) -> dict[str, str]:
    nodes = len(names)
    return {"SLURM_JOB_ID": job, "SLURM_JOBID": job, "SLURM_JOB_NAME": name, "SLURM_JOB_NODELIST": ",".join(names),
            "SLURM_NODELIST": ",".join(names), "SLURM_JOB_NUM_NODES": str(nodes), "SLURM_NNODES": str(nodes),
            "SLURMD_NODENAME": names[0], "SLURM_CLUSTER_NAME": "standin", "SLURM_SUBMIT_DIR": os.getcwd()}


def srun(node: Node, args: list[str]) -> int:
    options, command = parse_options(args)
    jobs = Jobs(node)
    job = options.get("--jobid") or os.environ.get("SLURM_JOB_ID")
    name = options.get("--job-name", os.environ.get("SLURM_JOB_NAME", command[0] if command else "srun"))
    new_job = job is None
    if job is None:
        job = jobs.new(name)
    nodes = _job_nodes(jobs, job)
    step = _step_nodes(options, nodes, not new_job)
    ntasks = options.get("--ntasks", "")
    tasks = int(ntasks) if ntasks.isdigit() and int(ntasks) > 0 else len(step)
    env = {**os.environ, **_job_env(job, name, nodes), "SLURM_STEP_ID": "0", "SLURM_PROCID": "0",
           "SLURM_LOCALID": "0", "SLURM_NODEID": "0", "SLURM_NTASKS": str(tasks)}
    export = options.get("--export", "ALL")
    items = export.split(",")
    if items[0] == "NONE":
        env = {k: v for k, v in env.items() if k.startswith("SLURM")}
        items = items[1:]
    elif items[0] == "ALL":
        items = items[1:]
    else:
        env = {k: v for k, v in env.items() if k.startswith("SLURM") or k in items or k == "PATH"}
    for item in items:
        key, eq, value = item.partition("=")
        if eq:
            env[key] = value
    if "--container-image" in options:
        def start(task_env: dict[str, str]) -> int:
            base = image_env(node)
            container = ContainerRun("pyxis", options["--container-image"], command,
                                     parse_mounts(options.get("--container-mounts", "")),
                                     options.get("--container-workdir"), {**base, **task_env, "PATH": base["PATH"]})
            return run("srun", container)

        if len(nodes) > 1:
            code = _run_tasks(start, env, step, tasks, os.path.join(jobs.dir, job, "pgids"))
            if new_job:
                jobs.end(job)
            return code
        if new_job:
            return _run_then_end(jobs, job, lambda: start(env))
        return start(env)
    if not command:
        print("srun: fatal: No command given to execute.", file=sys.stderr)
        return 1
    import subprocess  # here: a container's srun, the common one, does not pay its import

    code = subprocess.call(command, env=env, cwd=options.get("--chdir") or None)
    if new_job:
        jobs.end(job)
    return code


def _run_tasks(start: Callable[[dict[str, str]], int], env: dict[str, str], step: list[str], tasks: int,
               groups: str) -> int:
    """A step of a job of several nodes: its command once per task, at once, each task on its node (its rank,
    the node's name and own address, which the container's programs see) in a process group of its own, noted in
    the file ``groups`` for scancel, as shims/srun.sh runs one."""
    pids = []
    for t in range(tasks):
        name = step[t % len(step)]
        task_env = {**env, "SLURM_PROCID": str(t), "SLURM_NODEID": str(t % len(step)), "SLURMD_NODENAME": name,
                    "HOSTNAME": name, "STANDIN_NODE": name, "STANDIN_NODE_ADDR": node_address(name)}
        pid = os.fork()
        if pid == 0:
            os.setpgid(0, 0)
            # image_env reads which node this is from the environment, as a task's programs do
            os.environ.update({k: task_env[k] for k in ("HOSTNAME", "STANDIN_NODE", "STANDIN_NODE_ADDR")})
            os._exit(start(task_env))
        try:
            os.setpgid(pid, pid)  # (either side may set it first; the other finds it set)
        except OSError:
            pass
        with open(groups, "a") as f:
            f.write(f"{pid}\n")
        pids.append(pid)
    return max(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids)


def _run_then_end(jobs: Jobs, job: str, start: object) -> int:
    pid = os.fork()
    if pid == 0:
        code = start()  # type: ignore[operator]
        os._exit(code if isinstance(code, int) else 1)
    _, status = os.waitpid(pid, 0)
    jobs.end(job)
    return os.waitstatus_to_exitcode(status)


def _sbatch_directives(script: str) -> list[str]:
    out: list[str] = []
    try:
        with open(script) as f:
            for line in f:
                if line.startswith("#SBATCH"):
                    out.extend(line[len("#SBATCH"):].split())
                elif line.strip() and not line.startswith("#"):
                    break
    except OSError:
        pass
    return out


def sbatch(node: Node, args: list[str]) -> int:
    options, command = parse_options(args)
    if not command:
        print("sbatch: error: no batch script given (stand-in reads no script from stdin)", file=sys.stderr)
        return 1
    directives, _ = parse_options(_sbatch_directives(command[0]))
    options = {**directives, **options}
    name = options.get("--job-name", os.path.basename(command[0]))
    nodes = int((options.get("--nodes") or "1").split("-")[0] or 1)
    jobs = Jobs(node)
    job = jobs.new(name, nodes)
    output = (options.get("--output") or "slurm-%j.out").replace("%j", job).replace("%x", name)
    error = (options.get("--error") or output).replace("%j", job).replace("%x", name)
    env = {**os.environ, **_job_env(job, name, node_names(nodes))}
    for item in options.get("--export", "ALL").split(",")[1:]:
        key, eq, value = item.partition("=")
        if eq:
            env[key] = value
    import subprocess

    if os.fork() == 0:
        os.setsid()
        # the job's processes are this process group, which scancel ends (shims/scancel.sh)
        with open(os.path.join(jobs.dir, job, "pgid"), "w") as f:
            f.write(str(os.getpid()))
        # This process stands for slurmstepd, which no signal to the batch script's group reaches: it outlives one
        # and records the job's end (a handler, not SIG_IGN, which the script would inherit and could not trap).
        import signal

        signal.signal(signal.SIGTERM, lambda *_: None)
        with open(output, "ab") as out, open(error, "ab") if error != output else open(output, "ab") as err:
            code = subprocess.call(["bash", *command], env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                   cwd=options.get("--chdir") or None)
        jobs.end(job)
        os._exit(0)
    print(job if "--parsable" in options else f"Submitted batch job {job}", flush=True)
    return 0


PROGRAMS = {"srun": srun, "sbatch": sbatch}
