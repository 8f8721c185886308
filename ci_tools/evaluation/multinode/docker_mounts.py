"""``docker run -v HOST:CONTAINER[:ro]`` inside the string a script hands to ``srun bash -c``: which files
the container sees, and which of them the chain itself wrote.

AMD's ``job.slurm`` starts each node's container with ``srun ... bash -lc
"... \\$DOCKER_CMD run ... -v ${HICACHE_MC_CONFIG}:/config/hicache_mc.env:ro
..."``.  The string is written for two shells: ``${NAME}`` is expanded by
the submitting script when ``srun`` starts, ``\\$NAME`` by the node's shell
later.  A mount's host path is taken only when it is wholly of the first
kind, and is expanded in the submitting script's state, so an unknown path
still names the binding that holds it (``streams.file_key``): the same key
the script wrote the file under (``cat > "$HICACHE_MC_CONFIG" <<EOF``).

The string is read from its source text (``\\$`` kept apart, ``\\"`` and
line continuations undone) rather than from its expanded value, whose
unknown parts would hide the words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from ...bounded import BoundedDict
from ...findings import Location
from ...shell.expand import Field
from ...shell.model import Value
from ...shell.parse import Node, parse_script
from ...shell.streams import file_key

# Stands for `\$` of the source (a node-time expansion): a character no script writes.
_LATER = "\x03"
_DOCKER = re.compile(r"(?:.*/)?(?:docker|podman)|\$\{?[A-Za-z_]*DOCKER[A-Za-z_]*\}?")


@dataclass(frozen=True)
class Mount:
    """One ``-v``/``--volume`` item: the host path as the submitting script expands it, where it appears."""

    host: Value
    target: str
    read_only: bool
    location: Location


@dataclass(frozen=True)
class _Volume:
    """A ``-v`` item as written: its host path as a word to expand, its container path and flags."""

    host: tuple[Node, ...]
    target: str
    read_only: bool


def string_mounts(string_node: Node, expand: Callable[[list[Node]], list[tuple[Field, Value]]]) -> list[Mount]:
    """The mounts of each ``docker run`` in a double-quoted string run by ``bash -c`` (``expand``: the
    submitting script's word expansion)."""
    raw = string_node.text
    if len(raw) < 2 or raw[0] != '"' or raw[-1] != '"' or "-v" not in raw:  # ("--volume" too)
        return []
    volumes = _VOLUMES.get(raw)
    if volumes is None:
        # the same string for every job of the script: read once (only its expansion differs)
        volumes = _VOLUMES.put(raw, _volumes(raw[1:-1]))
    where = string_node.location()
    out: list[Mount] = []
    for v in volumes:
        fields = expand(list(v.host))
        if len(fields) == 1:
            out.append(Mount(fields[0][1], v.target, v.read_only, where))
    return out


_VOLUMES: BoundedDict[str, tuple[_Volume, ...]] = BoundedDict(1_000)


def _volumes(quoted: str) -> tuple[_Volume, ...]:
    inner = re.sub(r"\\([$`\"\\\n])", _unescaped, quoted)
    script = parse_script("<string run by srun>", inner.encode())
    out: list[_Volume] = []
    for command in _commands(script.root):
        words = [c for c in command.children if c.named and c.type not in ("file_redirect", "variable_assignment")]
        texts = [w.text for w in words]
        if "run" not in texts:
            continue
        at = texts.index("run")
        if not any(_DOCKER.fullmatch(t.replace(_LATER, "$")) for t in texts[:at]):
            continue
        for item in _volume_words(words[at + 1:]):
            volume = _volume(item)
            if volume is not None:
                out.append(volume)
    return tuple(out)


def _unescaped(m: re.Match[str]) -> str:
    """A backslash escape of a double-quoted string as bash reads it, ``\\$`` kept apart (expanded later)."""
    char = m.group(1)
    return _LATER if char == "$" else "" if char == "\n" else char


def _commands(root: Node) -> list[Node]:
    found: list[Node] = []
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type == "command":
            found.append(n)
        stack.extend(n.children)
    return found


def _volume_words(words: list[Node]) -> list[str]:
    out: list[str] = []
    for i, w in enumerate(words):
        if w.text in ("-v", "--volume") and i + 1 < len(words):
            out.append(words[i + 1].text)
        elif w.text.startswith(("-v=", "--volume=")):
            out.append(w.text.split("=", 1)[1])
    return out


def _volume(item: str) -> _Volume | None:
    """``HOST:CONTAINER[:FLAGS]``; None when the container path is not a literal or the host path is
    expanded on the node (its value is not the submitting script's)."""
    if item.startswith('"') and item.endswith('"') and len(item) > 1:
        item = item[1:-1]
    host, _, rest = item.partition(":")
    target, _, flags = rest.partition(":")
    if not host or not target.startswith("/") or re.search(r"[$`\\'\"" + _LATER + "]", target + flags):
        return None
    if _LATER in host or "$(" in host or "`" in host:
        return None
    commands = _commands(parse_script("<mount>", f": {host}".encode()).root)
    words = [c for c in commands[0].children if c.named][1:] if len(commands) == 1 else []
    return _Volume(tuple(words), target, "ro" in flags.split(",")) if words else None


@dataclass(frozen=True)
class MountedFile:
    """A container path mounted from a host file: its content when the chain wrote that file, else why
    it is unknown."""

    target: str
    content: Value | None
    reason: str = ""


def mounted_files(mounts: list[Mount], written: dict[str, Value]) -> dict[str, MountedFile]:
    """Each mount's container path with what the chain wrote at its host path (``written``: by
    ``streams.file_key``)."""
    out: dict[str, MountedFile] = {}
    for m in mounts:
        content = written.get(file_key(m.host))
        if content is not None:
            out[m.target] = MountedFile(m.target, content)
            continue
        host = m.host.text if m.host.text is not None else m.host.expression or "an unknown path"
        out[m.target] = MountedFile(m.target, None, f"it is mounted from {host} ({m.location.path}:"
                                                    f"{m.location.line}), a file this chain does not write")
    return out
