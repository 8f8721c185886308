"""Verdicts that the InferenceX history before the hand-labelled window showed false: worker counts that count
nodes."""

from __future__ import annotations

from ci_tools.claims.text.arms import Arm, node_counts
from ci_tools.findings import Location
from ci_tools.jobs.job import FIXED, Job


def wide_ep(prefill_workers: int, decode_tp: int) -> Job:
    """A GB300 wide-EP job of 8876745e3449: N prefill workers of DEP4 and one decode worker of DEP<decode_tp>."""
    return Job("dsv4-fp4-gb300-dynamo-sglang", FIXED, {
        "conc": [12000], "image": "img:1",
        "prefill": {"num-worker": prefill_workers, "tp": 4, "ep": 4, "dp-attn": True},
        "decode": {"num-worker": 1, "tp": decode_tp, "ep": decode_tp, "dp-attn": True}},
        Location(".github/configs/nvidia-master.yaml", 8799))


def test_worker_counts_may_count_nodes() -> None:
    # "EP=12 15P+3D conc=12000": 15 prefill workers of TP4 on 15 four-GPU nodes, one TP12 decode worker on 3
    job_15p = wide_ep(15, 12)
    assert node_counts(job_15p.fields) == {(15, 3)}
    assert Arm(workers=(15, 3)).admits(job_15p)  # the nodes
    assert Arm(workers=(15, 1)).admits(job_15p)  # the workers
    assert not Arm(workers=(14, 4)).admits(job_15p)
    # eight-GPU nodes: 8 workers of TP8 and a TP16 decode worker fill 8 and 2 nodes (or 16 and 4 of four GPUs)
    eight = Job("k", FIXED, {"conc": [64], "prefill": {"num-worker": 8, "tp": 8}, "decode": {"num-worker": 1, "tp": 16}},
                Location("c.yaml", 1))
    assert node_counts(eight.fields) == {(16, 4), (8, 2)}
    # a worker whose size is not known counts no nodes
    assert node_counts({"prefill": {"num-worker": 2}, "decode": {"num-worker": 1, "tp": 8}}) == set()

