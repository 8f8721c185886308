"""Rules of the append-only changelog gate (``perf-changelog.yaml``).

Each rule is one sentence of the gate that FORMATS.md documents.  They are
checked on what a change adds or edits (base revision against head), because
history is immutable: a defect already in the base cannot be fixed by any PR
and is not that PR's finding.
"""

from __future__ import annotations

from ..findings import register

FAMILY = "changelog"

FINAL_NEWLINE = register(
    "changelog-final-newline",
    summary="the changelog does not end with a newline",
    what="Checks that the last byte of the changelog is `\\n`.",
    why="An append to a file without a final newline glues the new entry to the last line of history.",
    example="  pr-link: https://github.com/OWNER/REPO/pull/12<EOF>",
    fix="End the file with exactly one `\\n`.",
    family=FAMILY,
)
FORBIDDEN_BYTE = register(
    "changelog-forbidden-byte",
    summary="a line of the changelog contains a CR, tab or NUL byte",
    what="Reports every added line that contains a carriage return, a tab or a NUL byte.",
    why="Tabs are not YAML indentation, CRLF line ends break the byte-level append rules, NUL is never text.",
    example="  description:\n  \t- \"Bump image\"",
    fix="Indent with spaces, save with LF line ends.",
    family=FAMILY,
)
ENCODING = register(
    "changelog-encoding",
    summary="the changelog is not valid UTF-8",
    what="Decodes the added bytes strictly as UTF-8 and reports the first invalid byte.",
    why="The changelog is read by YAML loaders and rendered on GitHub; both need UTF-8.",
    example="  description:\n    - \"caf\\xe9\"   # Latin-1 byte",
    fix="Save the file as UTF-8.",
    family=FAMILY,
)
NOT_A_LIST = register(
    "changelog-not-a-list",
    summary="the changelog (or what a change appends) is not a YAML list",
    what="Checks that the root of the changelog, and of the appended part, is a list of entries.",
    why="Every consumer iterates the entries; a mapping or scalar root has none.",
    example="config-keys:\n  - dsv4-fp4-mi355x-atom",
    fix="Start each entry with `- config-keys:` at column 0.",
    family=FAMILY,
)
ENTRY_COUNT = register(
    "changelog-entry-count",
    summary="the number of `- config-keys:` lines differs from the number of parsed entries",
    what="Counts lines starting with `- config-keys:` and compares with the entries the YAML parser finds.",
    why="Line-based tools (and reviewers) find entries by that line; an entry starting with another key, or a `- config-keys:` line inside a string, makes the two views disagree.",
    example="- description:\n    - \"Bump image\"\n  config-keys:\n    - dsv4-fp4-mi355x-atom",
    fix="Start every entry with `- config-keys:` and keep that text out of descriptions.",
    family=FAMILY,
)
HISTORY_CHANGED = register(
    "changelog-history-changed",
    summary="an existing changelog entry was edited",
    what="Compares the changelog at the head with the base revision: every historical line must stay as it was, apart from a corrected pr-link and, under the default whitespace policy (`changelog-gate.whitespace-between-entries: editable` in .ci-tools.yaml), blank or whitespace-only lines outside entries, which a change may add, remove or empty as InferenceX's own check allows. Reports every changed historical line, with the base line as a related location.",
    why="The changelog is the audit trail of what changed results; rewriting it hides why old numbers differ.",
    example="   description:\n-    - \"Bump image to 0901\"\n+    - \"Bump image to 0907\"",
    fix="Restore the historical lines and describe the new change in a new entry at the end.",
    family=FAMILY,
)
ENTRY_REMOVED = register(
    "changelog-entry-removed",
    summary="a changelog entry that exists at the base was removed",
    what="Reports every base entry that the head no longer contains (or the whole file, when it was deleted).",
    why="Removing history makes past result changes unexplained.",
    example="-- config-keys:\n-    - dsr1-fp8-mi300x-sglang",
    fix="Restore the entry; the changelog only grows.",
    family=FAMILY,
)
NOT_AT_END = register(
    "changelog-entry-not-at-end",
    summary="a new changelog entry was inserted before existing ones",
    what="Reports new entries that are not appended after the last historical entry.",
    why="Appending only keeps history byte-for-byte intact and makes the PR's entries easy to find.",
    example="- config-keys: [new-key]   # inserted between two historical entries",
    fix="Move the entry to the end of the file.",
    family=FAMILY,
)
SEPARATOR = register(
    "changelog-separator",
    summary="a new changelog entry is not preceded by exactly one blank line",
    what="Counts the blank lines directly above each appended `- config-keys:` line; exactly one is expected. Under the whitespace policy `history`, blank lines the base ends with are history, so above the first appended entry exactly those are expected when there are more than one (the change adds none).",
    why="One blank line between entries is the documented layout; double blank separators are how unreviewed hand edits show up in history.",
    example="  pr-link: https://github.com/OWNER/REPO/pull/1\n\n\n- config-keys:",
    fix="Leave exactly one empty line between entries (`ci-tools changelog new` does it for you).",
    family=FAMILY,
)
TRAILING_BLANK = register(
    "changelog-trailing-blank-line",
    summary="the changelog ends with a blank line",
    what="Reports blank (empty or whitespace-only) lines at the end of the file.",
    why="The next append would otherwise start with two blank lines or have to edit history.",
    example="  pr-link: https://github.com/OWNER/REPO/pull/1\n\n<EOF>",
    fix="Delete the blank lines after the last entry; keep the final newline.",
    family=FAMILY,
)
TRAILING_WHITESPACE = register(
    "changelog-trailing-whitespace",
    summary="a line of a new changelog entry ends with whitespace",
    what="Reports every appended line (separators included) that ends with a space.",
    why="Trailing whitespace is invisible in review and becomes immutable history once merged.",
    example="  pr-link: https://github.com/OWNER/REPO/pull/12␠␠",
    fix="Strip the trailing spaces.",
    family=FAMILY,
)
PR_LINK = register(
    "changelog-pr-link",
    summary="a new entry's pr-link is not this PR's link, the placeholder, or (on the main branch) canonical",
    what="On a pull request, new entries must link that PR or use the placeholder `XXX` / `.../pull/XXX`; on a branch other than the default one whose PR number is not known yet, a canonical link or the placeholder; on the default branch (no PR number) the link must be canonical (`https://github.com/OWNER/REPO/pull/N`, repository from the configuration). The verdict does not depend on how the base was found (`--base` or the merge-base).",
    why="The link is how a result change is traced back to its review; a copied link points at someone else's PR.",
    example="pr-link: https://github.com/OWNER/REPO/pull/2647   # copied from the entry above",
    fix="Use this PR's link, or `https://github.com/OWNER/REPO/pull/XXX` until the PR number is known.",
    family=FAMILY,
)
PR_LINK_CORRECTION = register(
    "changelog-pr-link-correction",
    summary="a corrected historical pr-link is not canonical",
    what="The only edit allowed to history is replacing a `  pr-link:` line; the new value must be a canonical link.",
    why="Corrections exist to replace placeholders; replacing one placeholder with another fixes nothing.",
    example="-  pr-link: https://github.com/OWNER/REPO/pull/XXX\n+  pr-link: TODO",
    fix="Write the merged PR's canonical link.",
    family=FAMILY,
)
CORRECTION_MIXED = register(
    "changelog-correction-mixed",
    summary="a pr-link correction is mixed with new entries",
    what="Reports a change that both corrects historical pr-links and appends entries.",
    why="A correction is reviewed as a history edit; mixing it with new entries hides it in a larger diff.",
    example="# one PR: replaces pull/XXX in an old entry and appends a new entry",
    fix="Make the pr-link correction its own PR.",
    family=FAMILY,
)
KEY_UNMATCHED = register(
    "changelog-key-unmatched",
    summary="a config-key (or glob) of a new entry matches no config at the head",
    what="Matches each config-key of an appended entry (`*` wildcard, whole-key match) against the master configs of the head revision.",
    why="An entry that names no existing config selects no benchmark job and documents nothing.",
    example="- config-keys:\n    - dsv4-fp4-mi355x-atom-agentx   # the config is dsv4-fp4-mi355x-atom-agentic",
    fix="Correct the key, or use a glob that matches the configs you changed.",
    family=FAMILY,
)
APPEND_ONLY = register(
    "changelog-append-only",
    summary="an entry marked `append-only: true` removes or alters matrix points",
    what="For new entries with `append-only: true`, every matrix point generated at the base for the entry's configs must still be generated at the head with the same fields and the same recipe, and at least one point must be added.",
    why="`append-only` tells the sweep to run only the new points and keep the published ones; that is only honest if the old points are unchanged.",
    example="append-only: true   # while the PR also bumps the config's image",
    fix="Drop `append-only: true` (the whole config reruns), or restore the altered points.",
    family=FAMILY,
)
