"""The `dispatch:` section of `.ci-tools.yaml`: defaults, validation with file and line, permission order."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_tools.config import load_config
from ci_tools.errors import UsageError
from ci_tools.github.auth import DispatchPolicy, effective_permission, load_policy


def policy_from(tmp_path: Path, text: str) -> DispatchPolicy:
    (tmp_path / ".ci-tools.yaml").write_text(text, encoding="utf-8")
    return load_policy(load_config(tmp_path))


def test_defaults_are_the_safe_ones(tmp_path: Path) -> None:
    policy = policy_from(tmp_path, "default-branch: trunk\n")
    assert policy == DispatchPolicy(min_permission="write", allow_users=(), allow_forks=False, workflow="sweep.yml",
                                    ref="trunk", max_jobs=512)


def test_every_setting(tmp_path: Path) -> None:
    policy = policy_from(tmp_path, "dispatch:\n  min-permission: maintain\n  allow-users: [Alice, bob-2]\n"
                                   "  allow-forks: true\n  workflow: 12345\n  ref: release/v1\n  max-jobs: 64\n")
    assert policy == DispatchPolicy("maintain", ("Alice", "bob-2"), True, "12345", "release/v1", 64)
    assert policy.allowlisted("alice") and not policy.allowlisted("carol")


@pytest.mark.parametrize(("text", "line", "message"), [
    ("dispatch:\n  min-permission: read\n", 2, "dispatch.min-permission: found 'read', expected one of: admin, "
     "maintain, write, none (triage and read are not accepted: GPU time needs write access or an allowlist)"),
    ("dispatch:\n  allow-forks: yes please\n", 2, "dispatch.allow-forks: found 'yes please', expected true or false"),
    ("dispatch:\n  workflow: ../evil\n", 2, "dispatch.workflow: found '../evil', expected a workflow file name "
     "such as `sweep.yml` or a workflow id"),
    ("dispatch:\n  max-jobs: 0\n", 2, "dispatch.max-jobs: found 0, expected a positive integer"),
    ("dispatch:\n\n  allow-users: [\"renovate[bot]\"]\n", 3, "dispatch.allow-users: found ['renovate[bot]'], "
     "expected a list of GitHub logins"),
    ("dispatch:\n  allow-users: alice\n", 2, "dispatch.allow-users: found 'alice', expected a list of GitHub logins"),
    ("dispatch:\n  ref: a..b\n", 2, "dispatch.ref: found 'a..b', expected a branch or tag name"),
    ("dispatch:\n  max-jobs: 3\n  allow-fork: true\n", 3, "unknown setting `dispatch.allow-fork`, expected one of: "
     "min-permission, allow-users, allow-forks, workflow, ref, max-jobs, bot-login"),
    ("dispatch:\n  min-permission: none\n", 2, "dispatch: `min-permission: none` with no `allow-users` lets nobody "
     "dispatch; list the allowed logins in `allow-users`"),
])
def test_errors_name_file_and_line(tmp_path: Path, text: str, line: int, message: str) -> None:
    with pytest.raises(UsageError) as err:
        policy_from(tmp_path, text)
    assert str(err.value) == f"{tmp_path / '.ci-tools.yaml'}:{line}: {message}"


@pytest.mark.parametrize(("minimum", "allowed"), [
    ("write", {"admin", "maintain", "write"}),
    ("maintain", {"admin", "maintain"}),
    ("admin", {"admin"}),
])
def test_permission_order(minimum: str, allowed: set[str]) -> None:
    policy = DispatchPolicy(min_permission=minimum)
    levels = {"admin", "maintain", "write", "triage", "read", "none", "custom-role"}
    assert {lvl for lvl in levels if policy.permission_suffices(lvl)} == allowed


def test_allowlist_only() -> None:
    policy = DispatchPolicy(min_permission="none", allow_users=("alice",))
    assert not policy.permission_suffices("admin")
    assert policy.allowlisted("ALICE")


@pytest.mark.parametrize(("payload", "level"), [
    ({"permission": "write", "role_name": "maintain"}, "maintain"),
    ({"permission": "read", "role_name": "triage"}, "triage"),
    # A custom role counts as the base role GitHub reports in `permission`.
    ({"permission": "write", "role_name": "benchmark-runner"}, "write"),
    ({"permission": "superuser"}, "none"),
    ({}, "none"),
])
def test_effective_permission(payload: dict[str, str], level: str) -> None:
    assert effective_permission(payload) == level
