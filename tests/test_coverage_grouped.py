"""Uncovered configs one changed line affects are one finding from GROUPED_FROM on (changelog/coverage.py): a
change of benchmark_lib.sh's client code (InferenceX pull request 2286) affected 160 configs, each its own error at
the same line; a change of runners/launch_b200-dgxc.sh (pull request 2289) 29 configs under three runner labels."""

from __future__ import annotations

from ci_tools.changelog.coverage import GROUPED_FROM, AffectedKey, Cause, Cover, coverage_findings

LIB = Cause("benchmarks/benchmark_lib.sh", 1195, "benchmark_lib.sh changed")
RECIPE = Cause("benchmarks/single_node/x.sh", 3, "recipe changed")


def keys(n: int, prefix: str = "dsr1-fp8-mi355x-") -> list[str]:
    return [f"{prefix}{i:02d}" for i in range(n)]


def test_many_configs_of_one_cause_are_one_finding_naming_them() -> None:
    affected = [AffectedKey(k, (LIB,)) for k in keys(GROUPED_FROM + 2)] + [AffectedKey("other", (RECIPE,))]
    found = coverage_findings(affected, [], changelog="perf-changelog.yaml")
    assert [f.data["key"] for f in found] == ["dsr1-fp8-mi355x-00", "other"]
    grouped = found[0]
    assert grouped.data["keys"] == keys(GROUPED_FROM + 2)
    assert (grouped.location.path, grouped.location.line) == (LIB.path, LIB.line)
    assert grouped.message.startswith(f"{GROUPED_FROM + 2} configs are affected by this change (benchmark_lib.sh "
                                      "changed at benchmarks/benchmark_lib.sh:1195) but no entry appended to "
                                      "perf-changelog.yaml covers them: dsr1-fp8-mi355x-00, dsr1-fp8-mi355x-01, ")
    assert "`other`" in found[1].message


def test_fewer_configs_or_ones_an_entry_names_stay_one_finding_each() -> None:
    few = [AffectedKey(k, (LIB,)) for k in keys(GROUPED_FROM - 1)]
    assert len(coverage_findings(few, [], changelog="perf-changelog.yaml")) == GROUPED_FROM - 1
    # an entry naming them for one scenario type leaves each its own finding saying which types are missing
    many = [AffectedKey(k, (LIB,)) for k in keys(GROUPED_FROM + 2)]
    partly = coverage_findings(many, [Cover(("dsr1-*",), ("fixed-seq-len",))], changelog="perf-changelog.yaml")
    assert len(partly) == GROUPED_FROM + 2 and all("limited to scenario-type fixed-seq-len" in f.message for f in partly)
    # covered ones are no finding at all
    assert coverage_findings(many, [Cover(("dsr1-*",))], changelog="perf-changelog.yaml") == []


def launcher_cause(runner: str) -> Cause:
    why = "changes what the job runs: srun at runners/launch_b200-dgxc.sh:467 is started differently"
    return Cause("runners/launch_b200-dgxc.sh", 414, f"launcher of runner {runner} {why}", shared_reason=f"launcher {why}")


def test_configs_a_launcher_change_reaches_under_several_runner_labels_are_one_finding() -> None:
    labels = ["b200", "b200-dsv4", "cluster:b200-dgxc"]
    affected = [AffectedKey(f"dsv4-fp4-b200-{i}", (launcher_cause(labels[i % 3]),)) for i in range(GROUPED_FROM + 1)]
    found = coverage_findings(affected, [], changelog="perf-changelog.yaml")
    assert len(found) == 1 and found[0].data["keys"] == [a.key for a in affected]
    assert (found[0].location.path, found[0].location.line) == ("runners/launch_b200-dgxc.sh", 414)
    # the message says the change as it reads for all of them, not one config's runner label
    assert f"{GROUPED_FROM + 1} configs are affected by this change (launcher changes what the job runs: srun at " \
           "runners/launch_b200-dgxc.sh:467 is started differently at runners/launch_b200-dgxc.sh:414)" in found[0].message
    # alone, a config's finding names its own runner
    one = coverage_findings(affected[1:2], [], changelog="perf-changelog.yaml")
    assert "(launcher of runner b200-dsv4 changes what the job runs" in one[0].message
