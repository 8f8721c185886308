"""Who may dispatch benchmarks: the ``dispatch:`` section of ``.ci-tools.yaml``.

```yaml
dispatch:
  min-permission: write      # admin | maintain | write | none (none: the allowlist only)
  allow-users: [alice]       # logins allowed whatever their permission
  allow-forks: false         # fork code would run on self-hosted runners
  workflow: sweep.yml        # the workflow_dispatch workflow to start
  ref: main                  # the ref it runs on (default: default-branch)
  max-jobs: 512              # refuse larger selections
  bot-login: github-actions[bot]  # who writes the replies (set it when the workflow uses an app's token)
```

Every key is optional; the defaults are the safe ones.  ``triage`` and
``read`` are not accepted as a minimum: on a public repository everyone has
``read``, and GPU time on self-hosted runners is not for everyone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

from ..config import ProjectConfig
from ..errors import UsageError
from ..revision.yamlpos import PosMap

# Highest first.  GitHub's `role_name` may also be triage/read or a custom role.
PERMISSION_ORDER = ("admin", "maintain", "write", "triage", "read", "none")
MIN_PERMISSION_CHOICES = ("admin", "maintain", "write", "none")
_LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\Z")
_BOT_LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\[bot\]\Z")
DEFAULT_BOT_LOGIN = "github-actions[bot]"
_WORKFLOW = re.compile(r"^(?:[0-9]+|[A-Za-z0-9_.-]+\.ya?ml)\Z")
_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}\Z")
_KEYS = ("min-permission", "allow-users", "allow-forks", "workflow", "ref", "max-jobs", "bot-login")


@dataclass(frozen=True)
class DispatchPolicy:
    min_permission: str = "write"
    allow_users: tuple[str, ...] = ()
    allow_forks: bool = False
    workflow: str = "sweep.yml"
    ref: str = "main"
    max_jobs: int = 512
    # Replies are only ever updated when this account wrote them.
    bot_login: str = DEFAULT_BOT_LOGIN

    def allowlisted(self, login: str) -> bool:
        """Whole-login match; GitHub logins are case-insensitive."""
        return login.casefold() in {u.casefold() for u in self.allow_users}

    def is_own(self, login: str) -> bool:
        return login.casefold() == self.bot_login.casefold()

    def permission_suffices(self, permission: str) -> bool:
        if self.min_permission == "none" or permission not in PERMISSION_ORDER:
            return False
        return PERMISSION_ORDER.index(permission) <= PERMISSION_ORDER.index(self.min_permission)


def effective_permission(payload: Mapping[str, Any]) -> str:
    """The permission level from a collaborator-permission response.

    ``role_name`` distinguishes maintain/triage and names custom roles;
    ``permission`` is the legacy level (admin/write/read/none) a custom role
    is based on, used when the role name is not one of the built-in ones.
    """
    role = payload.get("role_name")
    if isinstance(role, str) and role in PERMISSION_ORDER:
        return role
    legacy = payload.get("permission")
    return legacy if isinstance(legacy, str) and legacy in PERMISSION_ORDER else "none"


def load_policy(config: ProjectConfig) -> DispatchPolicy:
    """Parse and validate the ``dispatch`` section; errors name the file and line."""
    section = config.section("dispatch")
    path = config.source or ".ci-tools.yaml"

    def line(key: str) -> int:
        return section.value_span(key)[0] if isinstance(section, PosMap) else 0

    def fail(key: str, message: str) -> UsageError:
        return UsageError(f"dispatch.{key}: {message}", path=path, line=line(key))

    config.reject_unknown_keys("dispatch", _KEYS)
    kwargs: dict[str, Any] = {"ref": config.default_branch}
    if "min-permission" in section:
        value = section["min-permission"]
        if value not in MIN_PERMISSION_CHOICES:
            raise fail("min-permission", f"found {value!r}, expected one of: {', '.join(MIN_PERMISSION_CHOICES)} "
                       "(triage and read are not accepted: GPU time needs write access or an allowlist)")
        kwargs["min_permission"] = value
    if "allow-users" in section:
        value = section["allow-users"]
        if not isinstance(value, list) or not all(isinstance(u, str) for u in value):
            raise fail("allow-users", f"found {value!r}, expected a list of GitHub logins")
        bots = [u for u in value if u.lower().endswith("[bot]")]
        if bots:
            # Bots' comments are never acted on (a reply could otherwise start a loop).
            raise fail("allow-users", f"found {bots[0]!r}: bots cannot be allowed to dispatch, expected people's logins")
        wrong = [u for u in value if not _LOGIN.match(u)]
        if wrong:
            raise fail("allow-users", f"found {wrong[0]!r}, expected a GitHub login (letters, digits and hyphens, "
                       "not starting with a hyphen, at most 39 characters)")
        kwargs["allow_users"] = tuple(value)
    if "allow-forks" in section:
        value = section["allow-forks"]
        if not isinstance(value, bool):
            raise fail("allow-forks", f"found {value!r}, expected true or false")
        kwargs["allow_forks"] = value
    if "workflow" in section:
        value = section["workflow"]
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str) or not _WORKFLOW.match(value):
            raise fail("workflow", f"found {value!r}, expected a workflow file name such as `sweep.yml` or a workflow id")
        kwargs["workflow"] = value
    if "ref" in section:
        value = section["ref"]
        if not isinstance(value, str) or not _REF.match(value) or ".." in value:
            raise fail("ref", f"found {value!r}, expected a branch or tag name")
        kwargs["ref"] = value
    if "max-jobs" in section:
        value = section["max-jobs"]
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise fail("max-jobs", f"found {value!r}, expected a positive integer")
        kwargs["max_jobs"] = value
    if "bot-login" in section:
        value = section["bot-login"]
        if not isinstance(value, str) or not _BOT_LOGIN.match(value):
            raise fail("bot-login", f"found {value!r}, expected the login of a bot, such as `{DEFAULT_BOT_LOGIN}`")
        kwargs["bot_login"] = value
    policy = DispatchPolicy(**kwargs)
    if policy.min_permission == "none" and not policy.allow_users:
        raise UsageError("dispatch: `min-permission: none` with no `allow-users` lets nobody dispatch; "
                         "list the allowed logins in `allow-users`", path=path,
                         line=line("min-permission"))
    return policy
