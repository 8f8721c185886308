from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ci_tools.errors import UsageError
from ci_tools.revision.snapshot import GitSnapshot, WorkTreeSnapshot

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_SYSTEM": "/dev/null", "PATH": "/usr/bin:/bin",
}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "commit.gpgsign=false", *args],
                          check=True, capture_output=True, text=True, env=GIT_ENV).stdout.strip()


def committed(repo: Path, files: dict[str, str]) -> None:
    """A repository on `main` whose first commit holds ``files``."""
    git(repo, "init", "-q", "-b", "main")
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first")


def test_git_and_work_tree_snapshots_read_the_same_interface(tmp_path: Path) -> None:
    committed(tmp_path, {"configs/a-master.yaml": "one\n"})
    (tmp_path / "configs" / "a-master.yaml").write_text("two\n")
    (tmp_path / "configs" / "b-master.yaml").write_text("new\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "head")
    base = GitSnapshot(tmp_path, "HEAD~1")
    head = GitSnapshot(tmp_path, "HEAD")
    work = WorkTreeSnapshot(tmp_path)
    assert base.read("configs/a-master.yaml") == b"one\n"
    assert head.read("configs/a-master.yaml") == b"two\n"
    assert base.read("configs/b-master.yaml") is None
    assert base.glob("configs/*-master.yaml") == ["configs/a-master.yaml"]
    assert head.glob("configs/*-master.yaml") == work.glob("configs/*-master.yaml") == [
        "configs/a-master.yaml", "configs/b-master.yaml"]
    assert head.sha == git(tmp_path, "rev-parse", "HEAD")


def test_unknown_revision_says_what_to_do(tmp_path: Path) -> None:
    committed(tmp_path, {"f": "x"})
    with pytest.raises(UsageError, match="unknown revision 'nope'.*fetch"):
        GitSnapshot(tmp_path, "nope")


def test_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="is not a git repository"):
        GitSnapshot(tmp_path, "HEAD")


def test_a_revision_reads_alike_by_path_and_through_its_listing(tmp_path: Path) -> None:
    """Reads before the tree is listed go to git by `<commit>:<path>`; after, by blob id: same answers."""
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "dir with space").mkdir()
    (tmp_path / "dir with space" / "a b.sh").write_bytes(b"echo 1\n\x00binary\n")
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "link").symlink_to("dir with space/a b.sh")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "c")
    paths = ["dir with space/a b.sh", "empty", "link", "dir with space", "missing", "dir with space/missing"]
    by_path = GitSnapshot(tmp_path, "HEAD")
    answers = [by_path.read(p) for p in paths]
    listed = GitSnapshot(tmp_path, "main")
    assert listed.files() == ("dir with space/a b.sh", "empty", "link")
    assert [listed.read(p) for p in paths] == answers == [
        b"echo 1\n\x00binary\n", b"", b"dir with space/a b.sh", None, None, None]  # a link reads as its target's name
    assert listed.blob_id("empty") == git(tmp_path, "rev-parse", "HEAD:empty")


def test_a_folder_inside_a_repository_is_not_one(tmp_path: Path) -> None:
    """git would look for the repository in the parent folders; --repo must name the repository itself."""
    committed(tmp_path, {"sub/f": "x"})
    assert GitSnapshot(tmp_path, "HEAD").read("sub/f") == b"x"
    with pytest.raises(UsageError, match="is not a git repository"):
        GitSnapshot(tmp_path / "sub", "HEAD")


def test_branch_merge_base_and_changed_paths(tmp_path: Path) -> None:
    from ci_tools.revision.snapshot import changed_paths, current_branch, merge_base, rev_exists

    committed(tmp_path, {"a": "1"})
    base = git(tmp_path, "rev-parse", "HEAD")
    git(tmp_path, "checkout", "-q", "-b", "feature")
    (tmp_path / "a").write_text("2")
    git(tmp_path, "commit", "-qam", "change")
    (tmp_path / "new file").write_text("untracked")
    assert current_branch(tmp_path) == "feature"
    assert merge_base(tmp_path, "main", "HEAD") == base and merge_base(tmp_path, "nope") is None
    assert rev_exists(tmp_path, "main") and not rev_exists(tmp_path, "nope")
    assert changed_paths(tmp_path, base, None) == {"a", "new file"}
    assert changed_paths(tmp_path, base, "HEAD") == {"a"}
    with pytest.raises(UsageError, match="cannot compare 'nope' with the work tree: .*nope"):
        changed_paths(tmp_path, "nope", None)
    git(tmp_path, "checkout", "-q", "--detach")
    assert current_branch(tmp_path) is None


def test_blob_ids_at_many_commits_come_from_one_listing_and_say_which_lack_the_file(tmp_path: Path) -> None:
    """What a history replay asks of git at once: the changelog's blob at each commit, None where it is absent
    or is not a file; a listed commit id reads as the revision it names."""
    from ci_tools.revision.snapshot import blob_ids_at, read_blob_uncached

    committed(tmp_path, {"other": "x"})
    first = git(tmp_path, "rev-parse", "HEAD")
    (tmp_path / "log.yaml").write_text("- one\n")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "f").write_text("f\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "second")
    second = git(tmp_path, "rev-parse", "HEAD")
    (tmp_path / "log.yaml").write_text("- one\n- two\n")
    git(tmp_path, "commit", "-qam", "third")
    third = git(tmp_path, "rev-parse", "HEAD")
    ids = blob_ids_at(tmp_path, [first, second, third], "log.yaml")
    assert ids == {first: None, second: git(tmp_path, "rev-parse", "HEAD~1:log.yaml"),
                   third: git(tmp_path, "rev-parse", "HEAD:log.yaml")}
    assert ids[second] != ids[third]
    assert blob_ids_at(tmp_path, [third], "dir") == {third: None}  # a tree, not a file
    assert read_blob_uncached(tmp_path, str(ids[third])) == b"- one\n- two\n"
    listed = GitSnapshot(tmp_path, second, listed=True)
    assert listed.sha == second and listed.read("log.yaml") == b"- one\n" and listed.files() == ("dir/f", "log.yaml",
                                                                                                 "other")


def test_a_commit_lists_its_files_as_ls_tree_does_with_trees_shared_across_commits(tmp_path: Path) -> None:
    """The listing is read from tree objects kept by id: a second commit that changes one file deep in a folder
    lists its own version; a submodule (a commit in the tree) is no file."""
    from ci_tools.revision.gitcli import Git

    committed(tmp_path, {"a/b/c.sh": "1\n", "a/d.yaml": "x\n", "top": "t\n", "e/f": "f\n"})
    (tmp_path / "l").symlink_to("a/d.yaml")
    git(tmp_path, "update-index", "--add", "--cacheinfo", f"160000,{git(tmp_path, 'rev-parse', 'HEAD')},sub")
    git(tmp_path, "add", "l")
    git(tmp_path, "commit", "-qm", "link and submodule")
    (tmp_path / "a" / "b" / "c.sh").write_text("2\n")
    git(tmp_path, "commit", "-qam", "deep change")
    reader = Git(tmp_path)
    for rev in ("HEAD~2", "HEAD~1", "HEAD"):
        listed = git(tmp_path, "ls-tree", "-r", "--full-tree", rev).splitlines()
        expected = {line.split("\t")[1]: line.split()[2] for line in listed if line.split()[1] == "blob"}
        found = reader.blobs(git(tmp_path, "rev-parse", rev))
        assert list(found.items()) == list(expected.items())
    assert "sub" not in found and found["l"] == git(tmp_path, "rev-parse", "HEAD:l")
    assert found["a/b/c.sh"] == git(tmp_path, "rev-parse", "HEAD:a/b/c.sh") != reader.blobs(
        git(tmp_path, "rev-parse", "HEAD~1"))["a/b/c.sh"]
    assert found["e/f"] == reader.blobs(git(tmp_path, "rev-parse", "HEAD~2"))["e/f"]
