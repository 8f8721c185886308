# git: no network (clone, fetch, pull, submodule and ls-remote fail as offline); the rest is the real git.
case "$1" in
    clone|fetch|pull|ls-remote|submodule)
        echo "fatal: unable to access remote: Could not resolve host (stand-in: no network)" >&2
        exit 128 ;;
esac
exec "$_standin_git" "$@"
