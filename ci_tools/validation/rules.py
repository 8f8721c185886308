"""Rules of ``ci-tools validate``: schemas and cross-file rules of master configs.

The schema rules report what ``schemas/*.json`` rejects; the others need more
than one value or more than one file (runners.yaml, recipe scripts).  The
checks live in :mod:`ci_tools.validation.config_checks` and :mod:`ci_tools.validation.validate`.
"""

from __future__ import annotations

from ..findings import Severity, register

FAMILY = "config"

CONFIG_SCHEMA = register(
    "config-schema",
    summary="a master config does not match the master-config schema",
    what="Validates every config of every *-master.yaml file against schemas/master-config.schema.json "
         "(the single-node or the multinode shape, chosen by `multinode`): required keys, types, "
         "allowed values, positive integers (`num-worker` may be 0: the decode block of an aggregated multinode "
         "row), and no keys other than the documented ones.",
    why="The sweep generator reads these values verbatim: a `tp: \"8\"` or a misspelt `conc-strat` "
        "is silently passed on or ignored, and the benchmark runs something nobody asked for.",
    example="dsv4-fp4-mi355x-atom:\n  ...\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n"
            "      search-space:\n      - { tp: \"8\", conc-start: 4, conc-end: 64 }   # tp is a string",
    fix="Write the value with the documented type (`tp: 8`), remove or rename unknown keys, "
        "and add the keys the message names as missing.",
    family=FAMILY,
)
RUNNERS_SCHEMA = register(
    "runners-schema",
    summary="runners.yaml does not match the runners schema",
    what="Validates the runners file against schemas/runners.schema.json: `labels` maps each label to "
         "a non-empty list of node names (`<fleet>_<NN>`), `hardware` maps a label to "
         "`available-cpu-dram-mib` and `gpus-per-node` (positive integers), nothing else at top level.",
    why="Runner labels decide where jobs run and hardware facts decide the CPU DRAM budget of agentic "
        "jobs; a malformed entry breaks both without an error from GitHub.",
    example="hardware:\n  cluster:mi355x-amds:\n    gpus-per-node: eight   # not an integer",
    fix="Correct the value the message names; keep one label per key and node names like mi355x-amds_00.",
    family=FAMILY,
)
CHANGELOG_ENTRY_SCHEMA = register(
    "changelog-entry-schema",
    summary="a changelog entry does not match the changelog-entry schema",
    what="Validates every entry of perf-changelog.yaml against schemas/changelog-entry.schema.json: "
         "`config-keys` and `description` are non-empty lists of strings, `pr-link` a string, "
         "`scenario-type` a list of scenario names, the eval flags booleans, `append-only` never "
         "combined with eval flags, and no other keys. History is held to the shape only: whether an "
         "old entry's key globs still match is not asked, since its configs may since have been retired.",
    why="Every tool that reads the changelog (the sweep selection, the claims checker, the release notes) "
        "trusts this shape; an entry with `config-key:` instead of `config-keys:` selects nothing.",
    example="- config-keys: dsv4-fp4-mi355x-atom   # a string, expected a list\n  description:\n"
            "    - Raise the DEP band to c256\n  pr-link: https://github.com/OWNER/REPO/pull/12",
    fix="Write the field with the documented type (`config-keys:` followed by a `- key` list) "
        "and remove keys the schema does not know.",
    family=FAMILY,
)
CONFIG_KEY_DUPLICATE = register(
    "config-key-duplicate",
    summary="a config key is defined in more than one master file",
    what="Reports a config key that a later *-master.yaml file defines again; the earlier definition is "
         "the related location.",
    why="Config keys name benchmarks across the whole repository (changelog entries, results, dashboards); "
        "two definitions mean one of them silently wins.",
    example="# configs/amd-master.yaml and configs/extra-master.yaml both define\ndsv4-fp4-mi355x-atom:\n  ...",
    fix="Rename one of the two configs or delete the stale copy.",
    family=FAMILY,
)
CONFIG_KEY_INVALID = register(
    "config-key-invalid",
    summary="a config key contains `*` or is not a string",
    what="Reports config keys that contain `*` (the changelog's glob wildcard) and keys that YAML reads "
         "as something other than a string (a number, a boolean).",
    why="Changelog entries select configs with `*` globs; a key containing `*` cannot be named exactly, "
        "and a key such as `1` or `yes` is not the text that was written.",
    example="dsv4-*-mi355x-atom:\n  image: rocm/atom-dev:nightly",
    fix="Use a plain kebab-case key such as `dsv4-fp4-mi355x-atom`; quote keys that look like numbers.",
    family=FAMILY,
)
MODEL_PREFIX_UNDERSCORE = register(
    "model-prefix-underscore",
    summary="`model-prefix` contains `_`",
    what="Reports a `model-prefix` with an underscore.",
    why="Recipe file names are `<model-prefix>_<precision>_<gpu>_<framework>.sh` and are split on `_`; "
        "an underscore in the prefix makes the name ambiguous and the recipe lookup wrong.",
    example="model-prefix: dsv4_pro",
    fix="Use `-` or no separator in the prefix (`dsv4pro`, `dsv4-pro`) and rename the recipes to match.",
    family=FAMILY,
)
RUNNER_UNDEFINED = register(
    "runner-undefined",
    summary="a config's runner label is not defined in runners.yaml",
    what="Reports a `runner` that is not a key of `labels` in the runners file, with the closest defined labels.",
    why="GitHub queues a job for an unknown self-hosted label forever (or until it times out); the "
        "sweep never runs and nothing says why.",
    example="runner: cluster:mi325x-tw   # runners.yaml defines cluster:mi325x-amds only",
    fix="Use a label that runners.yaml defines, or add the label and its nodes to runners.yaml.",
    family=FAMILY,
)
AGENTIC_RUNNER_NOT_CLUSTER = register(
    "agentic-runner-not-cluster",
    summary="an agentic-coding config does not use a `cluster:` runner label",
    what="Reports configs with an `agentic-coding` scenario whose `runner` does not start with `cluster:`.",
    why="Agentic jobs size their CPU DRAM budget from the cluster's hardware facts (`hardware` in runners.yaml), "
        "which are keyed by `cluster:` labels; a plain label leaves the budget unknown.",
    example="runner: mi355x\nscenarios:\n  agentic-coding:\n  - search-space: [...]",
    fix="Use the cluster label of the fleet, e.g. `runner: cluster:mi355x-amds`.",
    family=FAMILY,
)
GPUS_EXCEED_NODE = register(
    "gpus-exceed-node",
    summary="a worker needs more GPUs than a node of its runner has",
    what="Where runners.yaml has hardware facts for the runner label (or a multinode block's `hardware`, or "
         "the `cluster:<fleet>` entry of the fleet the label's nodes belong to), reports single-node rows whose "
         "tp x pp x pcp-size exceeds `gpus-per-node`, and multinode worker blocks that neither fit in one node "
         "nor fill whole nodes. A worker with data-parallel attention whose `ep` exceeds tp x pp x pcp-size "
         "(DEP) spans `ep` GPUs; a block with `num-worker: 0` runs no worker and is not checked.",
    why="Such a job cannot be scheduled: the server fails at start-up after the runner was already taken.",
    example="runner: cluster:mi355x-amds   # gpus-per-node: 8\n...\n- { tp: 8, pp: 2, conc-start: 4, conc-end: 64 }",
    fix="Lower tp/pp/pcp-size so that their product fits the node, or use a multinode config.",
    family=FAMILY,
)
EP_GPU_MISMATCH = register(
    "ep-gpu-mismatch",
    summary="expert parallelism does not fit the GPUs of the worker",
    what="Reports an `ep` that does not divide the tensor-parallel group (tp x pp x pcp-size) when it is not "
         "larger; on a single-node row, an `ep` larger than the group (the job gets GPU_COUNT = tp x pp x "
         "pcp-size GPUs); on a multinode worker block, an `ep` larger than the group without `dp-attn: true`, "
         "or with it but not a multiple of the group. With data-parallel attention (DEP) a worker runs "
         "ep / tp ranks and spans `ep` GPUs: vLLM's `tp: 1, ep: 8` or `tp: 4, ep: 16`, as InferenceX runs them. "
         "A block with `num-worker: 0` (aggregated multinode) runs no worker and is not checked.",
    why="Experts are sharded over the worker's GPUs; an `ep` the layout cannot hold is rejected by the "
        "engines at start-up, or silently clamped, so the benchmark does not measure the declared layout.",
    example="- { tp: 4, ep: 8, conc-start: 4, conc-end: 64 }            # single node: 4 GPUs\n"
            "prefill: { num-worker: 1, tp: 4, ep: 16, dp-attn: false }  # EP beyond TP without DEP",
    fix="Set `ep` to a divisor of the GPU count, usually 1 (TP) or equal to `tp` (TEP); for DEP set "
        "`dp-attn: true` and an `ep` that is a multiple of tp.",
    family=FAMILY,
)
DISAGG_REQUIRES_MULTINODE = register(
    "disagg-requires-multinode",
    summary="`disagg: true` on a single-node config",
    what="Reports `disagg: true` in a config with `multinode: false`.",
    why="Disaggregated prefill/decode needs separate prefill and decode workers, which only the multinode "
        "shape describes; a single-node recipe ignores the flag.",
    example="multinode: false\ndisagg: true",
    fix="Remove `disagg` or make the config multinode with `prefill` and `decode` blocks.",
    family=FAMILY,
)
DISAGG_KV_TRANSFER_MISSING = register(
    "disagg-kv-transfer-missing",
    summary="a disaggregated config names no `kv-p2p-transfer`",
    what="Reports `disagg: true` multinode configs without `kv-p2p-transfer` at top level: once, at `disagg: "
         "true`, when no search-space row sets it either, else at each row that does not.",
    why="The KV transfer backend (mori, nixl, ...) decides how prefill hands the KV cache to decode; "
        "without it the recipe falls back to a default that the results do not record.",
    example="multinode: true\ndisagg: true\n# no kv-p2p-transfer",
    fix="Add `kv-p2p-transfer: <backend>` at top level, or to every search-space row.",
    family=FAMILY,
)
KV_TRANSFER_SINGLE_NODE = register(
    "kv-transfer-single-node",
    summary="`kv-p2p-transfer` on a single-node config",
    what="Reports `kv-p2p-transfer` at top level or in a search-space row of a config with `multinode: false`.",
    why="KV peer-to-peer transfer exists only between disaggregated workers; on a single node the value is "
        "ignored and misleads readers of the config.",
    example="multinode: false\nkv-p2p-transfer: mori",
    fix="Remove `kv-p2p-transfer`, or make the config multinode and disaggregated.",
    family=FAMILY,
)
ROUTER_VERSION_IMAGE = register(
    "router-version-image",
    summary="`router.version` is a container image reference",
    what="Reports a router `version` (top level or in a row) that looks like an image reference "
         "(`registry/name:tag`, `name@sha256:...`).",
    why="`version` records the router release or commit the results were produced with; an image reference "
        "there means the image was put in the wrong field, and the version is unknown.",
    example="router: { name: sglang-router, version: lmsysorg/sglang-router:v0.3.2 }",
    fix="Put the release or commit in `version` (`\"0.3.2\"`, a commit sha).",
    family=FAMILY,
)
CONC_RANGE_INVERTED = register(
    "conc-range-inverted",
    summary="`conc-start` is greater than `conc-end`",
    what="Reports search-space rows whose concurrency range starts above its end.",
    why="The generator produces no point at all for such a row (or only the end value); the row "
        "silently disappears from the sweep.",
    example="- { tp: 8, conc-start: 64, conc-end: 4 }",
    fix="Swap the values, or use `conc-list` for an explicit order.",
    family=FAMILY,
)
DCP_SIZE_INDIVISIBLE = register(
    "dcp-size-indivisible",
    summary="`tp` is not a multiple of `dcp-size`",
    what="Reports rows and worker blocks where `tp % dcp-size != 0`.",
    why="Decode context parallelism splits the tensor-parallel group; engines refuse a dcp-size that does "
        "not divide tp.",
    example="- { tp: 8, dcp-size: 3, conc-start: 4, conc-end: 64 }",
    fix="Use a dcp-size that divides tp (1, 2, 4 or 8 for tp 8).",
    family=FAMILY,
)
KV_OFFLOAD_BACKEND_MISMATCH = register(
    "kv-offload-backend-mismatch",
    summary="`kv-offload-backend` without `kv-offloading: dram`, or `dram` without a backend",
    what="Reports agentic rows with `kv-offloading: dram` but no `kv-offload-backend`, and rows with a "
         "`kv-offload-backend` whose `kv-offloading` is not `dram`.",
    why="The backend is the software that offloads the KV cache to DRAM; without offloading it is never "
        "used, and DRAM offloading without a named backend cannot be reproduced.",
    example="- { tp: 4, kv-offloading: dram, conc-list: [8, 16] }   # which backend?",
    fix="Add `kv-offload-backend: { name: lmcache, version: \"0.5.3\" }` to dram rows, or remove the backend.",
    family=FAMILY,
)
DRAM_UTILIZATION_MISSING = register(
    "dram-utilization-missing",
    summary="a `kv-offloading: dram` row in a block without `dram-utilization`",
    what="Reports agentic rows that offload to DRAM while their agentic-coding block has no `dram-utilization`.",
    why="The CPU DRAM budget of the job (TOTAL_CPU_DRAM_GB) is computed from `dram-utilization`; without it "
        "the recipe gets an empty budget.",
    example="agentic-coding:\n- search-space:\n  - { tp: 4, kv-offloading: dram, kv-offload-backend: { name: hicache }, conc-list: [8] }",
    fix="Add `dram-utilization: 0.8` (a fraction in (0, 1]) to the agentic-coding block.",
    family=FAMILY,
)
HARDWARE_ONE_BLOCK = register(
    "hardware-one-block",
    summary="`hardware` is set on only one of the prefill and decode blocks",
    what="Reports multinode rows where exactly one of `prefill` and `decode` names `hardware`.",
    why="`hardware` places the workers on a kind of node; naming it for one role only leaves the other "
        "role's placement to chance.",
    example="prefill: { num-worker: 1, tp: 8, ep: 8, dp-attn: true, hardware: mi355x }\n"
            "decode:  { num-worker: 1, tp: 8, ep: 8, dp-attn: true }",
    fix="Set `hardware` on both blocks, or on neither.",
    family=FAMILY,
)
RECIPE_MISSING = register(
    "recipe-missing",
    summary="a search-space row names no recipe that exists",
    what="Resolves each search-space row's recipe the way the launcher of every fleet of its runner label "
         "(runners/launch_<fleet>.sh) picks it (ci_tools/config/resolution_rules.py; `recipe-resolution` in "
         ".ci-tools.yaml adds rules): a bash script (the first existing of the candidate paths), or the "
         "srt-slurm recipe named by `CONFIG_FILE=` in the row's additional-settings. Reports rows for which a "
         "fleet finds no script, srt-slurm rows without CONFIG_FILE, and CONFIG_FILE recipes missing from a "
         "directory the repository holds (the launchers copy it over their srt-slurm checkout). A CONFIG_FILE "
         "recipe outside the repository's directories is the checkout's (external), not a finding.",
    why="The launcher fails at run time on a self-hosted GPU runner, after the job was queued and the "
        "runner taken; catching it on the pull request costs nothing.",
    example="model-prefix: dsv4\nprecision: fp4\nrunner: cluster:mi355x-amds\nframework: atom\n"
            "# but benchmarks/single_node/fixed_seq_len/dsv4_fp4_mi355x_atom.sh does not exist",
    fix="Add the recipe at the first path listed, correct model-prefix, precision, framework or runner, or "
        "point CONFIG_FILE at a recipe that exists (the message lists the closest names).",
    family=FAMILY,
    severity=Severity.ERROR,
)
