# curl: on a node of a multi-node job (STANDIN_NODE_ADDR, set by shims/srun.sh), a URL whose host means "this
# machine" (0.0.0.0, localhost, 127.0.0.1) reaches the node's own address, where its servers listen (each node
# is a machine of its own, as programs/common.py's on_this_node says for the Python stand-ins); elsewhere, and
# for every other URL, the machine's own curl as it is.
if [[ -n "${STANDIN_NODE_ADDR:-}" ]]; then
    _args=()
    for _a in "$@"; do
        if [[ "$_a" =~ ^(https?://)(0\.0\.0\.0|localhost|127\.0\.0\.1)([:/].*)?$ ]]; then
            _a="${BASH_REMATCH[1]}${STANDIN_NODE_ADDR}${BASH_REMATCH[3]}"
        fi
        _args+=("$_a")
    done
    set -- "${_args[@]}"
fi
exec "$_standin_curl" "$@"
