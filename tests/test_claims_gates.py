"""Conditions an entry writes out for where a change applies, and the partial claims they explain."""

from __future__ import annotations

from ci_tools.claims.verdict.gates import explained_by_a_gate, gates_in
from ci_tools.findings import Location
from ci_tools.jobs.job import FIXED, Job


def job(isl: int, conc: int) -> Job:
    return Job("k", FIXED, {"tp": 4, "isl": isl, "osl": 1024, "conc": conc}, Location("configs/amd-master.yaml", 9))


# b38bf415003c (InferenceX #2187): the fast path is gated to the long-context high-concurrency tail.
TEXT = ("Concurrency-gate the fast path to the long-context high-concurrency tail (isl>=8192 && conc>=64). "
        "Sparse PA is a long-context optimization")


def test_a_gate_is_read_from_the_entry_and_selects_its_jobs() -> None:
    [gate] = gates_in([TEXT])
    assert gate.terms == (("isl", ">=", 8192), ("conc", ">=", 64))
    assert [gate.admits(job(8192, c)) for c in (32, 64, 512)] == [False, True, True]
    assert gate.admits(job(1024, 512)) is False
    multinode = Job("k", FIXED, {"isl": 8192, "conc": [64, 128]}, Location("configs/amd-master.yaml", 9))
    assert gate.admits(multinode) is None  # a list of concurrencies: not one number to compare
    assert gates_in(["no condition here (TP4, conc 64)"]) == []


def test_a_claim_true_exactly_inside_a_gate_is_explained_and_no_other() -> None:
    jobs = [job(isl, c) for isl in (1024, 8192) for c in (32, 64, 128)]
    gates = gates_in([TEXT])
    tail = {j.id for j in jobs if j.fields["isl"] == 8192 and j.conc is not None and j.conc >= 64}
    assert explained_by_a_gate(tail, jobs, gates)
    assert not explained_by_a_gate(tail | {jobs[0].id}, jobs, gates)  # set outside the gate too
    assert not explained_by_a_gate(set(list(tail)[:1]), jobs, gates)  # missing inside it
    assert not explained_by_a_gate(tail, jobs, [])
