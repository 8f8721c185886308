"""What a report knows besides its findings: where locations and rules link to, what was suppressed.

Renderers stay pure functions (findings and this context in, text out); the
CLI builds the context from the run: inside GitHub Actions every location
links to its line at the commit checked (``$GITHUB_SERVER_URL/
$GITHUB_REPOSITORY/blob/<sha>/<path>#L<line>``; a finding the change fixed,
to its line at the base), and every rule id links to its documentation page
(``docs/rules/<id>.md``, generated from the rule registry).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping
from urllib.parse import quote

from ..findings import Baseline, Finding, Location

if TYPE_CHECKING:
    from ..config.suppressions import Suppression

# Where the rule documentation is published: the pages under docs/rules/ of ci-tools' own repository.
RULES_URL = "https://github.com/ci-tools/ci-tools/blob/main/docs/rules/"
_SHA = re.compile(r"^[0-9a-f]{40}$")
_SLUG = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


def rule_url(rule_id: str) -> str:
    """The documentation page of a rule (SARIF ``helpUri``, the rule links of the Markdown report)."""
    return f"{RULES_URL}{rule_id}.md"


@dataclass(frozen=True)
class Links:
    """Where a repository's files are shown: ``server/repository/blob/<sha>/<path>#L<line>``."""

    server: str
    repository: str
    head_sha: str
    base_sha: str | None = None

    def url(self, finding: Finding) -> str | None:
        """The line of a finding's location at the commit it was found in; None when it is not a file."""
        location = finding.location
        sha = self.base_sha if finding.baseline is Baseline.ABSENT else self.head_sha
        if not location.in_repository or sha is None:
            return None
        return self.location_url(location, sha)

    def location_url(self, location: Location, sha: str) -> str:
        anchor = f"#L{location.line}" if location.line > 0 else ""
        if anchor and location.end_line > location.line:
            anchor += f"-L{location.end_line}"
        return f"{self.server}/{self.repository}/blob/{sha}/{quote(location.path, safe='/')}{anchor}"


def actions_links(head_sha: str | None, base_sha: str | None = None,
                  env: Mapping[str, str] | None = None) -> Links | None:
    """Links to the checked commit inside GitHub Actions (None elsewhere, or when a value is missing)."""
    env = os.environ if env is None else env
    server = env.get("GITHUB_SERVER_URL", "").rstrip("/")
    repository = env.get("GITHUB_REPOSITORY", "")
    if env.get("GITHUB_ACTIONS") != "true" or not server.startswith("https://") or not _SLUG.match(repository):
        return None
    if head_sha is None or not _SHA.match(head_sha):
        return None
    return Links(server, repository, head_sha, base_sha if base_sha and _SHA.match(base_sha) else None)


@dataclass(frozen=True)
class ReportContext:
    """Everything a renderer may use besides the findings (all optional)."""

    links: Links | None = None
    # Findings `ignore:` in .ci-tools.yaml suppressed, with the entry that did.
    suppressed: tuple[tuple[Finding, Suppression], ...] = field(default=())
    colour: bool = False


PLAIN = ReportContext()
